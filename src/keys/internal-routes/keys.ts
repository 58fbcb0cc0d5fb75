import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf, sessionOf } from '../../http/plugins/internal-auth.js';
import {
  DataEnvelope,
  ListEnvelope,
  Nullable,
  TimestampIn,
  TimestampOut,
} from '../../http/schemas/common.js';
import { PageOnlyQuery } from '../../http/schemas/internal.js';
import { parseRfc3339, toWire, toWireOrNull } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { listEnvelope, pageOf } from '../../master-data/list-query.js';
import type { ApiKeyListed } from '../repository.js';

/** `ApiKey` of docs/web-app.md: never the token, which is shown once when minted. */
export const ApiKeySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  created_at: TimestampOut(),
  expires_at: Nullable(TimestampOut()),
  last_used_at: Nullable(TimestampOut()),
  revoked_at: Nullable(TimestampOut()),
  status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
  /** Who minted it; `removed` once they left the organization (the key stays the organization's). */
  created_by: Nullable(Type.Object({ id: Type.Integer(), email: Type.String(), removed: Type.Boolean() })),
});

export function apiKeyView(key: ApiKeyListed, now = Date.now()) {
  const status: 'active' | 'expired' | 'revoked' = key.revokedAt
    ? 'revoked'
    : key.expiresAt && key.expiresAt.getTime() <= now
      ? 'expired'
      : 'active';
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    created_at: toWire(key.createdAt),
    expires_at: toWireOrNull(key.expiresAt),
    last_used_at: toWireOrNull(key.lastUsedAt),
    revoked_at: toWireOrNull(key.revokedAt),
    status,
    created_by: key.createdBy,
  };
}

const MintBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    scopes: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 }),
    expires_at: Nullable(TimestampIn()),
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({
  key_id: Type.String({ format: 'uuid', 'x-message': 'must be an API key id (a UUID)' }),
});

/** The organization's API keys: list, mint (the token shown once), revoke. */
export const keyRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/keys',
      {
        config: { role: 'admin' },
        schema: {
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(ApiKeySchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = pageOf(request.query);
        const { rows, total } = await s.keys.list(orgId, page);
        const now = Date.now();
        return listEnvelope(
          rows.map((k) => apiKeyView(k, now)),
          page,
          total,
        );
      },
    );

    app.post(
      '/internal/keys',
      {
        config: { role: 'admin' },
        schema: {
          body: MintBody,
          response: { 201: Type.Object({ data: ApiKeySchema, token: Type.String() }) },
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        const { name, scopes, expires_at } = request.body;
        const minted = await s.keys.mint({
          caller: callerOf(request),
          name,
          scopes,
          expiresAt: expires_at === null ? undefined : new Date(parseRfc3339(expires_at)!),
          createdByUserId: session.userId,
        });
        reply.code(201);
        return { data: apiKeyView(minted.key), token: minted.token };
      },
    );

    app.post(
      '/internal/keys/:key_id/revoke',
      {
        config: { role: 'admin' },
        schema: { params: KeyParams, response: { 200: DataEnvelope(ApiKeySchema) } },
      },
      async (request) => {
        return { data: apiKeyView(await s.keys.revoke(callerOf(request), request.params.key_id)) };
      },
    );
  };
