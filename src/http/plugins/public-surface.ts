import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiCaller, Principal, PublicAuthenticator } from '../../auth-types.js';
import { ApiError } from '../../errors.js';
import { takeToken } from '../rate-limit/gate.js';
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
  await takeToken(deps.rateLimit, caller.bucket ?? `ip:${request.ip}`, request, reply);
  return caller;
}

/**
 * Every request under /api/: the rate limit (`rateLimitPublic`); then, for v1 routes,
 * authenticate and check the scope.
 */
export function registerPublicSurface(app: FastifyInstance, deps: PublicSurfaceDeps): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/')) return;
    const caller = await rateLimitPublic(deps, request, reply);
    const required = request.routeOptions.config.scopes;
    if (required === undefined) return;
    request.principal = await caller.authenticate();
    const missing = required.filter((s) => !request.principal!.scopes.has(s));
    if (missing.length > 0) {
      throw new ApiError('forbidden', `This API key lacks the required scope: ${missing.join(', ')}`);
    }
  });
}
