import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/pool.js';
import { fieldError } from '../../errors.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, ExternalKey, Id, TimestampIn } from '../../http/schemas/common.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { locationsByTagKeys, matchKey } from '../../tracking/resolve.js';
import { parseScanRecord, type ScanRecord } from '../records.js';

/** Items per submission: a shelf or a room scanned in one go. */
export const HANDHELD_MAX_ITEMS = 1000;

const Tag = Type.String({ minLength: 1, maxLength: 255 });

const HandheldBody = Type.Object(
  {
    location: Type.Object(
      { id: Type.Optional(Id()), external_key: Type.Optional(ExternalKey()), tag: Type.Optional(Tag) },
      { additionalProperties: false },
    ),
    items: Type.Array(
      Type.Object(
        {
          asset_id: Type.Optional(Id()),
          asset_external_key: Type.Optional(ExternalKey()),
          tag: Type.Optional(Tag),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: HANDHELD_MAX_ITEMS },
    ),
    observed_at: Type.Optional(TimestampIn()),
  },
  { additionalProperties: false },
);

const HandheldResult = Type.Object({
  applied: Type.Integer({ description: 'Items stored as sightings of an asset at the location' }),
  unknown: Type.Integer({ description: 'Items that match no live asset' }),
  errors: Type.Array(Type.String(), { description: 'One message per item that was refused' }),
  unknown_items: Type.Array(Type.String(), {
    description: 'The items that match no live asset, as submitted (tag value, asset key or asset id)',
  }),
});

/** How a person scanned the item: the value they would recognise. */
const itemValue = (item: { asset_id?: number; asset_external_key?: string; tag?: string }) =>
  item.tag ?? item.asset_external_key ?? String(item.asset_id);

type LocationRef = { id?: number; external_key?: string; tag?: string };

/** The live location a handheld names by id, external key or tag; 400 fk_not_found when none. */
async function resolveLocation(tx: Tx, orgId: number, ref: LocationRef): Promise<number> {
  const given = (['id', 'external_key', 'tag'] as const).filter((k) => ref[k] !== undefined);
  if (given.length !== 1) {
    throw fieldError('location', 'invalid_value', 'location needs exactly one of id, external_key or tag', {
      given,
    });
  }
  let id: number | undefined;
  if (ref.id !== undefined || ref.external_key !== undefined) {
    const byId = ref.id !== undefined;
    const { rows } = await tx.query<{ id: number }>(
      `SELECT id FROM locations WHERE org_id = $1 AND ${byId ? 'id' : 'external_key'} = $2 AND deleted_at IS NULL`,
      [orgId, byId ? ref.id : ref.external_key],
    );
    id = rows[0]?.id;
  } else {
    const keys = [...new Set([matchKey('rfid', ref.tag!), ref.tag!])];
    const found = await locationsByTagKeys(tx, orgId, keys);
    id = keys.map((k) => found.get(k)).find((v) => v !== undefined);
  }
  if (id === undefined) {
    // Said as the person scanning would: by what they scanned or typed, not as JSON.
    const named =
      ref.id !== undefined
        ? `with id ${ref.id}`
        : ref.external_key !== undefined
          ? `with key "${ref.external_key}"`
          : `carrying the tag "${ref.tag}"`;
    throw fieldError('location', 'fk_not_found', `No live location ${named}`, { location: ref });
  }
  return id;
}

/**
 * The handheld inventory page: every item scanned at one location, as scan records
 * through the ingest service (the same path as imported records).
 */
export const handheldRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/internal/handheld',
      {
        config: { role: 'editor' },
        schema: { body: HandheldBody, response: { 200: DataEnvelope(HandheldResult) } },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const body = request.body;
        const locationId = await s.db.withOrg(orgId, (tx) => resolveLocation(tx, orgId, body.location));
        const observedAt = body.observed_at ?? toWire(Date.now());
        const records: ScanRecord[] = [];
        const recordItems: number[] = []; // records[k] came from body.items[recordItems[k]]
        const errors: string[] = [];
        body.items.forEach((item, i) => {
          const parsed = parseScanRecord({ ...item, observed_at: observedAt, location_id: locationId });
          if (typeof parsed === 'string') errors.push(`item ${i + 1}: ${parsed}`);
          else {
            records.push(parsed);
            recordItems.push(i);
          }
        });
        let applied = 0;
        let unknown = 0;
        const unknownItems: string[] = [];
        if (records.length > 0) {
          const outcome = await s.ingest.records(orgId, records, 'handheld', JSON.stringify(body));
          applied = outcome.good;
          unknown = outcome.unknown;
          errors.push(...outcome.errors);
          for (const k of outcome.unknownIndexes ?? [])
            unknownItems.push(itemValue(body.items[recordItems[k]!]!));
        }
        return { data: { applied, unknown, errors, unknown_items: unknownItems } };
      },
    );
  };
