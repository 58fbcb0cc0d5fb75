import { type TSchema, Type } from '@sinclair/typebox';
import { AssetSchema } from '../assets/schemas.js';
import { Nullable } from '../http/schemas/common.js';
import { LocationSchema } from '../locations/schemas.js';
import { TagSchema } from '../master-data/fields.js';
import { EVENT_TYPES, type EventType } from './outbox.js';

/**
 * The JSON Schema of what a webhook receives (served at /api/events.schema.json): OpenAPI
 * 3.0.3, which v1 keeps, has no `webhooks` section, so the event payloads are described
 * here, beside the OpenAPI document, reusing the API's own resource schemas.
 */
const Id = () => Type.Integer({ minimum: 1 });
const Instant = () => Type.String({ format: 'date-time' });

const ReadSourceSchema = Type.Union([
  Type.Object(
    { type: Type.Literal('reader'), reader_id: Id(), antenna: Nullable(Type.Integer({ minimum: 0 })) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('handheld') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('import') }, { additionalProperties: false }),
]);

const MoveSchema = Type.Object(
  {
    asset_id: Id(),
    asset_external_key: Type.String(),
    asset_name: Type.String(),
    from_location_id: Nullable(Id()),
    from_location_external_key: Nullable(Type.String()),
    location_id: Id(),
    location_external_key: Type.String(),
    observed_at: Instant(),
    source: Nullable(ReadSourceSchema),
  },
  { $id: 'AssetMove', description: 'asset.moved and asset.first_seen (from_location_* null)' },
);

const NotSeenSchema = Type.Object(
  {
    asset_id: Id(),
    asset_external_key: Type.String(),
    asset_name: Type.String(),
    location_id: Id(),
    location_external_key: Type.String(),
    last_seen_at: Instant(),
    not_seen_seconds: Type.Integer({ minimum: 1 }),
  },
  { $id: 'AssetNotSeen' },
);

const TagEventSchema = Type.Object(
  {
    id: Id(),
    tag_type: Type.String(),
    value: Type.String(),
    owner_type: Type.Union([Type.Literal('asset'), Type.Literal('location')]),
    owner_id: Id(),
  },
  { $id: 'TagEvent' },
);

const PAYLOAD: Record<EventType, string> = {
  'asset.moved': 'AssetMove',
  'asset.first_seen': 'AssetMove',
  'asset.not_seen': 'AssetNotSeen',
  'asset.created': 'Asset',
  'asset.updated': 'Asset',
  'asset.deleted': 'Asset',
  'location.created': 'Location',
  'location.updated': 'Location',
  'location.deleted': 'Location',
  'tag.attached': 'TagEvent',
  'tag.detached': 'TagEvent',
};

const definitions: Record<string, TSchema> = {
  Tag: TagSchema,
  Asset: AssetSchema,
  Location: LocationSchema,
  AssetMove: MoveSchema,
  AssetNotSeen: NotSeenSchema,
  TagEvent: TagEventSchema,
};

export const EVENT_SCHEMA_PATH = '/api/events.schema.json';

/**
 * The API's schemas say "may be null" the OpenAPI 3.0 way (`nullable: true`); a JSON
 * Schema validator wants `anyOf` with `{"type": "null"}`. Rewritten on a copy.
 */
function jsonSchemaNulls(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchemaNulls);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key !== 'nullable') out[key] = jsonSchemaNulls(value);
  }
  if ((node as { nullable?: unknown }).nullable !== true) return out;
  const { description, ...rest } = out;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
}

/** The document: one branch per event type, each naming its payload's schema. */
export function eventSchemaDocument(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'tagtrail webhook event',
    description:
      'The body of every webhook delivery (docs/events.md). The webhook-id header equals `id`; ' +
      'the signature covers `<webhook-id>.<webhook-timestamp>.<body>`.',
    type: 'object',
    required: ['id', 'type', 'organization_id', 'occurred_at', 'data'],
    properties: {
      id: { type: 'string', pattern: '^evt_[0-9]+$', description: 'The same on every attempt: dedupe on it' },
      type: { type: 'string', enum: [...EVENT_TYPES] },
      organization_id: { type: 'integer', minimum: 1 },
      occurred_at: { type: 'string', format: 'date-time' },
      data: { type: 'object' },
    },
    oneOf: EVENT_TYPES.map((type) => ({
      properties: { type: { const: type }, data: { $ref: PAYLOAD[type] } },
    })),
    definitions: jsonSchemaNulls(definitions),
  };
}
