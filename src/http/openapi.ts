import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { declareResponseHeaders } from './openapi-headers.js';

const DESCRIPTION = `Asset and location tracking service, public API v1.

Authenticate with \`Authorization: Bearer <API key>\`. Every operation lists the scopes it
requires in \`x-required-scopes\`. Errors use the envelope \`{ "error": { type, title, status,
detail, instance, request_id, fields? } }\`; branch on \`error.type\`, and read \`fields[]\`
only for \`validation_error\`. Rate-limit headers \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`
and \`X-RateLimit-Reset\` (seconds until the budget is whole again) are on every response, as is
\`x-request-id\`; \`Retry-After\` on 429 and 503, \`Allow\` on 405, \`Location\` on 201. Each
operation declares them.`;

type QuerySchema = { required?: string[]; properties?: Record<string, { default?: unknown }> };

/**
 * A query parameter with a default (limit, offset, include_deleted) is always present once
 * validation has filled the default in, so its schema lists it as required; a client need
 * not send it, so the document must not. The route's own schema is left untouched.
 */
function withOptionalDefaults<T extends { querystring?: unknown }>(schema: T): T {
  const query = schema?.querystring as QuerySchema | undefined;
  if (!query?.required || !query.properties) return schema;
  const required = query.required.filter((name) => query.properties?.[name]?.default === undefined);
  return { ...schema, querystring: { ...query, required: required.length > 0 ? required : undefined } };
}

/**
 * The OpenAPI 3.0.3 document is generated from the same route schemas that validate
 * requests; each public operation carries `x-required-scopes` from its route config.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    const scopes = route.config?.scopes;
    if (scopes !== undefined && route.schema) {
      (route.schema as Record<string, unknown>)['x-required-scopes'] = scopes;
    }
    // PATCH takes only JSON merge patch (RFC 7396); say so in the document.
    if (route.method === 'PATCH' && route.schema?.body) {
      (route.schema as Record<string, unknown>).consumes = ['application/merge-patch+json'];
    }
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'tagtrail API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
      security: [{ apiKey: [] }],
    },
    hideUntagged: false,
    transformObject: (document) =>
      declareResponseHeaders(
        ('openapiObject' in document ? document.openapiObject : {}) as Record<string, unknown>,
      ),
    // Name components after the schemas' $id instead of def-N.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => {
      const isPublic =
        url.startsWith('/api/v1/') && !route.config?.methodNotAllowed && route.method !== 'HEAD';
      return { schema: isPublic ? withOptionalDefaults(schema) : { ...schema, hide: true }, url };
    },
  });

  app.get('/api/openapi.json', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(app.swagger()),
  );
  app.get('/api/openapi.yaml', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })),
  );
  app.get('/openapi.json', { schema: { hide: true } }, async (_req, reply) =>
    reply.redirect('/api/openapi.json', 301),
  );
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_req, reply) =>
    reply.redirect('/api/openapi.yaml', 301),
  );
}
