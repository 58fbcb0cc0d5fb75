import type { FastifyInstance } from 'fastify';
import { buildCoercer, type ObjectCoercer } from '../validation/coerce.js';

const EMPTY_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    coerceQuery?: ObjectCoercer;
    coerceParams?: ObjectCoercer;
  }
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
    const { coerceQuery, coerceParams } = request.routeOptions.config;
    if (coerceQuery) request.query = coerceQuery(request.query as Record<string, unknown>);
    if (coerceParams) request.params = coerceParams(request.params as Record<string, unknown>);
    done();
  });
}
