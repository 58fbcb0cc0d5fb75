import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiCaller, type Principal, type PublicAuthenticator, StaleKeyError } from '../../auth-types.js';
import type { Caller } from '../../caller.js';
import { ApiError } from '../../errors.js';
import { addressBucket } from '../rate-limit/address-bucket.js';
import { takeToken } from '../rate-limit/gate.js';
import type { RateDecision, RateLimitStore } from '../rate-limit/types.js';
import { isBareDescriptionPath, onPublicApi } from '../request-target.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scopes a public route requires; `[]` for authenticated routes needing none. */
    scopes?: string[];
    methodNotAllowed?: boolean;
    /** On a 405 route: the `Allow` header, the methods its path declares. */
    allow?: string;
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

/** The authenticated caller as the services' write methods take it: the organization and the key. */
export function callerOf(request: FastifyRequest): Caller {
  const { orgId, keyId, keyName } = principalOf(request);
  return { orgId, actor: { type: 'api_key', id: keyId, name: keyName } };
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export interface PublicSurfaceDeps {
  authenticator: PublicAuthenticator;
  rateLimit: RateLimitStore;
}

/**
 * Takes a token from the caller's bucket (per API key when the bearer token verifies, per
 * client address otherwise) and puts the rate-limit headers on the response, errors
 * included; throws the 429. Also used for what Fastify answers before routing (bad URLs).
 */
export async function rateLimitPublic(
  deps: PublicSurfaceDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ApiCaller> {
  const caller = await deps.authenticator.identify({
    authorization: header(request.headers.authorization),
    xApiKey: header(request.headers['x-api-key']),
  });
  await takeToken(deps.rateLimit, caller.bucket ?? addressBucket(request.ip), request, reply);
  return caller;
}

/** What is known of a caller whose request no route saw (src/http/connections.ts): its credentials as far as they could be read, and its address. */
export interface RawCaller {
  authorization?: string;
  xApiKey?: string;
  address: string;
}

/**
 * The bucket `rateLimitPublic` would take from, for an answer written without a Fastify
 * request: peeked (nothing taken) for a request that was never parsed, or a token taken
 * (`take`) for one that was. Undefined when the store cannot answer (no headers then, as
 * for a routed request in an outage).
 */
export async function rawRateLimitPublic(
  deps: PublicSurfaceDeps,
  caller: RawCaller,
  mode: 'peek' | 'take',
): Promise<RateDecision | undefined> {
  try {
    const identified = await deps.authenticator.identify({
      authorization: caller.authorization,
      xApiKey: caller.xApiKey,
    });
    const bucket = identified.bucket ?? addressBucket(caller.address);
    return await (mode === 'take' ? deps.rateLimit.take(bucket) : deps.rateLimit.peek(bucket));
  } catch {
    return undefined;
  }
}

function requireScopes(principal: Principal, required: string[]): void {
  const missing = required.filter((s) => !principal.scopes.has(s));
  if (missing.length > 0) {
    throw new ApiError('forbidden', `This API key lacks the required scope: ${missing.join(', ')}`);
  }
}

/**
 * Every request under /api/: the rate limit (`rateLimitPublic`); then, for v1 routes,
 * authenticate and check the scope. A principal admitted on a cached key record carries a
 * confirmation: the route's handler runs through it (its first transaction re-reads the
 * key), and when the key turned out changed, the handler's work was undone and it runs
 * again on the record as the database has it, or the request is refused.
 */
export function registerPublicSurface(app: FastifyInstance, deps: PublicSurfaceDeps): void {
  app.addHook('onRequest', async (request, reply) => {
    // The bare /openapi.json and /openapi.yaml redirects are part of the public contract too.
    if (!onPublicApi(request) && !isBareDescriptionPath(request.routeOptions.url)) return;
    const caller = await rateLimitPublic(deps, request, reply);
    const required = request.routeOptions.config.scopes;
    if (required === undefined) return;
    let principal = await caller.authenticate();
    // A refusal is only given on the record as the database has it now.
    if (principal.confirmation && required.some((s) => !principal.scopes.has(s))) {
      principal = await principal.confirmation.fresh();
    }
    request.principal = principal;
    requireScopes(principal, required);
  });

  app.addHook('onRoute', (route) => {
    const required = route.config?.scopes;
    if (required === undefined) return;
    const handler = route.handler;
    route.handler = async function confirmedHandler(this: FastifyInstance, request, reply) {
      const confirmation = request.principal?.confirmation;
      if (!confirmation) return handler.call(this, request, reply);
      try {
        return await confirmation.run(async () => handler.call(this, request, reply));
      } catch (err) {
        if (!(err instanceof StaleKeyError)) throw err;
        request.principal = await confirmation.fresh();
        requireScopes(request.principal, required);
        return handler.call(this, request, reply);
      }
    };
  });
}
