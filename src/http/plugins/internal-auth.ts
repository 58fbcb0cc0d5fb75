import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type InternalSession,
  type IssuedSession,
  roleIncludes,
  type SessionAuthenticator,
  type UserRole,
} from '../../auth-types.js';
import { type Caller, userCaller } from '../../caller.js';
import { ApiError } from '../../errors.js';
import { takeToken } from '../rate-limit/gate.js';
import type { RateLimitStore } from '../rate-limit/types.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * An /internal/ route. Set for every route under /internal/ (and usable elsewhere):
     * the web session is required, API keys are not accepted, state-changing methods need
     * the CSRF token.
     */
    internal?: boolean;
    /** An /internal/ route for people not signed in yet (sign-up, sign-in): no session, no CSRF token. */
    signedOut?: boolean;
    /**
     * The least role that may call this /internal/ route (viewer < editor < admin). Every
     * route under /internal/ but the `signedOut` ones declares one; a route without it is
     * refused to everybody but admins (and test/internal/roles.test.ts fails).
     */
    role?: UserRole;
    /**
     * Reachable by a session that must set up two-factor sign-in first (its organization
     * requires it): the session itself, sign-out and the enrolment routes.
     */
    totpEnrolment?: boolean;
  }
  interface FastifyRequest {
    /** The web session of an /internal/ request; set by the internal-auth hook. */
    session?: InternalSession;
  }
  interface FastifyInstance {
    /** Every cookie Secure (InternalAuthDeps.secureCookies), not only those of https requests. */
    secureCookies: boolean;
  }
}

export const SESSION_COOKIE = 'tagtrail_session';
/** The device cookie (src/accounts/device-cookies.ts), sent only to sign-in. */
export const DEVICE_COOKIE = 'tagtrail_device';
const DEVICE_COOKIE_PATH = '/internal/auth/sign-in';
export const CSRF_HEADER = 'x-csrf-token';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The signed-in caller; only reachable on /internal/ routes that are not `signedOut`. */
export function sessionOf(request: FastifyRequest): InternalSession {
  if (!request.session) throw new Error('route has no session authentication configured');
  return request.session;
}

/** The signed-in person as the services' write methods take them: the organization and the user. */
export function callerOf(request: FastifyRequest): Caller {
  const { orgId, user } = sessionOf(request);
  return userCaller(orgId, user);
}

/** The value of one cookie in a Cookie header (the first, when sent twice). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value === '' ? undefined : value;
  }
  return undefined;
}

/**
 * The session cookie (and the device cookie, by name and path): HttpOnly, SameSite=Strict,
 * Path=/, Secure when the request came over TLS (Fastify's `request.protocol`:
 * X-Forwarded-Proto counts only with TAGTRAIL_TRUST_PROXY) or the public address is https:
 * behind a TLS proxy that is not trusted every request looks like plain HTTP, and a cookie
 * without Secure would be sent to an http:// page of the same host (a downgrade, a
 * stripped redirect) in the clear.
 */
function cookie(
  request: FastifyRequest,
  value: string,
  maxAgeSeconds: number,
  name = SESSION_COOKIE,
  path = '/',
): string {
  const parts = [
    `${name}=${value}`,
    `Path=${path}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (request.server.secureCookies || request.protocol === 'https') parts.push('Secure');
  return parts.join('; ');
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, issued: IssuedSession): void {
  const maxAge = Math.max(0, Math.floor((issued.expiresAt.getTime() - Date.now()) / 1000));
  reply.header('set-cookie', cookie(request, issued.token, maxAge));
}

export const clearedSessionCookie = (request: FastifyRequest) => cookie(request, '', 0);

/**
 * Adds the device cookie after the session cookie: the same flags, but a year long and only
 * sent to sign-in, the one place that reads it. Sign-out leaves it: it is what keeps this
 * browser able to sign in while a stranger spends the email's sign-in budget.
 */
export function setDeviceCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  device: { value: string; maxAgeSeconds: number },
): void {
  reply.header(
    'set-cookie',
    cookie(request, device.value, device.maxAgeSeconds, DEVICE_COOKIE, DEVICE_COOKIE_PATH),
  );
}

/** The device cookie a request carries, if any. */
export const deviceCookieOf = (request: FastifyRequest) => readCookie(request.headers.cookie, DEVICE_COOKIE);

const article = (role: UserRole) => (/^[aeiou]/.test(role) ? `an ${role}` : `a ${role}`);

const isInternal = (request: FastifyRequest) =>
  request.routeOptions.config.internal === true || request.url.startsWith('/internal/');

export interface InternalAuthDeps {
  sessions: SessionAuthenticator;
  /** Requests per web session (TAGTRAIL_SESSION_RATE_LIMIT a minute). */
  sessionRateLimit: RateLimitStore;
  /** Every cookie Secure, whatever the request's protocol (TAGTRAIL_PUBLIC_URL is https). */
  secureCookies: boolean;
}

/**
 * Authentication of /internal/: the session cookie only. An Authorization header is never
 * read here (API keys, and session tokens sent as Bearer, do not authenticate), and the
 * public API's hook never reads the cookie. Unknown paths and undeclared methods fall
 * through to their 404 and 405 answers.
 *
 * Each request takes a token from its session's bucket before the session's row is read,
 * so a session past its budget (or a stolen cookie hammering) costs no database work. No
 * X-RateLimit-* headers: /internal/ is not the public contract; the 429 carries Retry-After.
 */
export function registerInternalAuth(app: FastifyInstance, deps: InternalAuthDeps): void {
  app.decorate('secureCookies', deps.secureCookies);
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/internal/')) route.config = { ...route.config, internal: true };
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!isInternal(request)) return;
    reply.header('cache-control', 'no-store');
    const { config, url } = request.routeOptions;
    if (url === undefined || config.methodNotAllowed || config.signedOut) return;

    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (token === undefined) {
      throw new ApiError(
        'unauthorized',
        request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined
          ? 'API keys are not accepted here; sign in to the web app'
          : 'Not signed in',
      );
    }
    const checked = await deps.sessions.check(token);
    if (checked.bucket !== undefined) {
      await takeToken(deps.sessionRateLimit, checked.bucket, request, reply, {
        headers: false,
        detail: (seconds) =>
          `Too many requests from this session; try again in ${seconds} second${seconds === 1 ? '' : 's'}`,
      });
    }
    const session = await deps.sessions.authenticate(checked);
    if (!session) {
      throw new ApiError('unauthorized', 'The session has ended; sign in again', undefined, {
        'set-cookie': clearedSessionCookie(request),
      });
    }
    if (STATE_CHANGING.has(request.method)) {
      const presented = request.headers[CSRF_HEADER];
      if (!deps.sessions.csrf.verify(session.sessionId, Array.isArray(presented) ? undefined : presented)) {
        throw new ApiError('forbidden', 'Missing or invalid X-CSRF-Token header');
      }
    }
    const required = config.role ?? 'admin';
    if (!roleIncludes(session.user.role, required)) {
      throw new ApiError(
        'forbidden',
        `This needs the ${required} role; you are ${article(session.user.role)}`,
      );
    }
    if (session.totpEnrolmentRequired && !config.totpEnrolment) {
      throw new ApiError(
        'forbidden',
        'Your organization requires two-factor sign-in: set it up on your account page first',
      );
    }
    request.session = session;
  });
}
