import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { buildCoercer, type ObjectCoercer } from '../validation/coerce.js';

const EMPTY_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    coerceQuery?: ObjectCoercer;
    coerceParams?: ObjectCoercer;
  }
}

/**
 * A trailing or doubled slash matches a route with an empty id, whose own answer (405 on the
 * detail route, `must be an integer`) would not say what is wrong with the path: the 404
 * naming the segment, or null.
 */
export function emptySegment(request: FastifyRequest): ApiError | null {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const empty = request.url.startsWith('/api/') && Object.keys(params).find((k) => params[k] === '');
  if (!empty) return null;
  const path = request.url.split('?')[0];
  const detail = `No route for ${request.method} ${path}: the ${empty} segment is empty (a trailing or doubled slash)`;
  return new ApiError('not_found', detail);
}

/**
 * Every /api/ and /internal/ route validates its query string, so unknown keys are rejected even where
 * a route takes none; query and path values are converted by strict rules first.
 */
export function registerStrictInputs(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const strict = route.url.startsWith('/api/') || route.url.startsWith('/internal/');
    if (!strict || route.config?.methodNotAllowed) return;
    route.schema ??= {};
    route.schema.querystring ??= EMPTY_QUERY;
    route.config = {
      ...route.config,
      coerceQuery: buildCoercer(route.schema.querystring as never),
      coerceParams: buildCoercer(route.schema.params as never),
    };
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const empty = emptySegment(request);
    if (empty) return done(empty);
    const { coerceQuery, coerceParams } = request.routeOptions.config;
    if (coerceQuery) request.query = coerceQuery(request.query as Record<string, unknown>);
    if (coerceParams) request.params = coerceParams(request.params as Record<string, unknown>);
    done();
  });
}
