import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal, PublicAuthenticator } from '../../auth-types.js';
import { ApiError } from '../../errors.js';
import type { RateLimitStore } from '../rate-limit/types.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scopes a public route requires; `[]` for authenticated routes needing none. */
    scopes?: string[];
    methodNotAllowed?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** The authenticated caller; only reachable on routes that declare `config.scopes`. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route has no authentication configured');
  return request.principal;
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * Every request under /api/: take a token from the caller's bucket (per API key when the
 * bearer token verifies, per client address otherwise) and put the rate-limit headers on
 * the response, errors included; then, for v1 routes, authenticate and check the scope.
 */
export function registerPublicSurface(
  app: FastifyInstance,
  deps: { authenticator: PublicAuthenticator; rateLimit: RateLimitStore },
): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/')) return;
    const caller = await deps.authenticator.identify({
      authorization: header(request.headers.authorization),
      xApiKey: header(request.headers['x-api-key']),
    });
    const bucket = caller.bucket ?? `ip:${request.ip}`;

    let decision: Awaited<ReturnType<RateLimitStore['take']>> | undefined;
    try {
      decision = await deps.rateLimit.take(bucket);
    } catch (err) {
      // A rate-limit store outage must not take the API down with it.
      request.log.warn({ err }, 'rate limit store unavailable; request let through');
    }
    if (decision) {
      reply.header('x-ratelimit-limit', decision.limit);
      reply.header('x-ratelimit-remaining', decision.remaining);
      reply.header('x-ratelimit-reset', decision.resetSeconds);
      if (!decision.allowed) {
        throw new ApiError(
          'rate_limited',
          `Rate limit of ${decision.limit} requests exceeded; retry later`,
          undefined,
          {
            'retry-after': String(decision.retryAfterSeconds),
          },
        );
      }
    }

    const required = request.routeOptions.config.scopes;
    if (required === undefined) return;
    request.principal = await caller.authenticate();
    const missing = required.filter((s) => !request.principal!.scopes.has(s));
    if (missing.length > 0) {
      throw new ApiError('forbidden', `This API key lacks the required scope: ${missing.join(', ')}`);
    }
  });
}
