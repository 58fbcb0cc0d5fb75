import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../../src/http/plugins/public-surface.js';
import { ExternalKey, Id, Nullable, PageQuery, TimestampIn } from '../../src/http/schemas/common.js';
import { parseRfc3339, toWire } from '../../src/http/timestamps.js';

/**
 * Test-only routes that exercise the shared HTTP contract (auth, 405, 415, body decoding,
 * field errors) with every verb, before any real write endpoint exists. Each echoes what
 * it received. Mount with `buildTestApp({ routes: [probeRoutes] })`.
 */
export const PROBE_TAG_TYPES = ['rfid', 'ble', 'barcode'] as const;

const TagType = Type.Unsafe<(typeof PROBE_TAG_TYPES)[number]>({
  type: 'string',
  enum: [...PROBE_TAG_TYPES],
});

const ProbeTag = Type.Object(
  { tag_type: TagType, value: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

const probeFields = {
  external_key: Type.Optional(ExternalKey()),
  ref_id: Type.Optional(Id()),
  observed_at: Type.Optional(TimestampIn()),
  description: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024 }))),
  tags: Type.Optional(Type.Array(ProbeTag)),
};

const ProbeCreate = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }), ...probeFields },
  { additionalProperties: false },
);

const ProbeUpdate = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), ...probeFields },
  { additionalProperties: false },
);

const ProbeParams = Type.Object({ probe_id: Id() });

const ProbeListQuery = Type.Object(PageQuery, { additionalProperties: false });

/** `observed_at` as the server would store and return it (truncated to milliseconds). */
function normalized(body: { observed_at?: string }) {
  const millis = body.observed_at === undefined ? null : parseRfc3339(body.observed_at);
  return millis === null ? {} : { observed_at_wire: toWire(millis) };
}

export const probeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/probes',
    { config: { scopes: ['assets:read'] }, schema: { querystring: ProbeListQuery } },
    async (request) => ({
      data: [],
      limit: request.query.limit,
      offset: request.query.offset,
      total_count: 0,
    }),
  );

  app.post(
    '/api/v1/probes',
    { config: { scopes: ['assets:write'] }, schema: { body: ProbeCreate } },
    async (request, reply) => {
      principalOf(request);
      reply.code(201);
      return { data: { received: request.body, ...normalized(request.body) } };
    },
  );

  app.get(
    '/api/v1/probes/:probe_id',
    { config: { scopes: ['assets:read'] }, schema: { params: ProbeParams } },
    async (request) => ({ data: { id: request.params.probe_id } }),
  );

  app.patch(
    '/api/v1/probes/:probe_id',
    { config: { scopes: ['assets:write'] }, schema: { params: ProbeParams, body: ProbeUpdate } },
    async (request) => ({
      data: { id: request.params.probe_id, received: request.body, ...normalized(request.body) },
    }),
  );

  app.delete(
    '/api/v1/probes/:probe_id',
    { config: { scopes: ['assets:write'] }, schema: { params: ProbeParams } },
    async (_request, reply) => reply.code(204).send(),
  );
};
