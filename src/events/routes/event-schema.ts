import type { FastifyPluginAsync } from 'fastify';
import { EVENT_SCHEMA_PATH, eventSchemaDocument } from '../schema.js';

/** The event payloads' JSON Schema, served beside /api/openapi.json (rate-limited, no key needed). */
export const eventSchemaRoute: FastifyPluginAsync = async (app) => {
  const body = JSON.stringify(eventSchemaDocument(), null, 2);
  app.get(EVENT_SCHEMA_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/schema+json; charset=utf-8').send(body),
  );
};
