import type { Tx } from '../db/pool.js';
import { assetsByTagKeys, locationsByTagKeys, matchKey } from '../tracking/resolve.js';
import type { ScanRecord } from './records.js';

/**
 * The references of handheld submissions and imported records (by id, external key or tag
 * value) resolved to live assets or locations, for IngestService.records.
 */

/** Both spellings a bare tag value may be stored under: normalised RFID/BLE, or a barcode. */
const tagKeys = (value: string) => [...new Set([matchKey('rfid', value), value])];

async function liveIds(
  tx: Tx,
  table: 'assets' | 'locations',
  orgId: number,
  ids: number[],
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await tx.query<{ id: number }>(
    `SELECT id FROM ${table} WHERE org_id = $1 AND id = ANY($2::bigint[]) AND deleted_at IS NULL`,
    [orgId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

async function liveKeys(tx: Tx, table: 'assets' | 'locations', orgId: number, keys: string[]) {
  if (keys.length === 0) return new Map<string, number>();
  const { rows } = await tx.query<{ id: number; external_key: string }>(
    `SELECT id, external_key FROM ${table} WHERE org_id = $1 AND external_key = ANY($2::text[]) AND deleted_at IS NULL`,
    [orgId, keys],
  );
  return new Map(rows.map((r) => [r.external_key, r.id]));
}

type Ref = ScanRecord['asset'];

/**
 * Resolves references by id, external key or tag value to live rows of one table, in
 * three queries whatever the number of references; undefined where nothing matches.
 */
export async function resolveRefs(
  table: 'assets' | 'locations',
  tx: Tx,
  orgId: number,
  refs: Ref[],
): Promise<(number | undefined)[]> {
  const ids = refs.flatMap((r) => ('id' in r ? [r.id] : []));
  const keys = refs.flatMap((r) => ('externalKey' in r ? [r.externalKey] : []));
  const tags = refs.flatMap((r) => ('tag' in r ? tagKeys(r.tag) : []));
  const byTagKeys = table === 'assets' ? assetsByTagKeys : locationsByTagKeys;
  const byId = await liveIds(tx, table, orgId, ids);
  const byKey = await liveKeys(tx, table, orgId, keys);
  const byTag = await byTagKeys(tx, orgId, tags);
  return refs.map((r) => {
    if ('id' in r) return byId.has(r.id) ? r.id : undefined;
    if ('externalKey' in r) return byKey.get(r.externalKey);
    return tagKeys(r.tag)
      .map((k) => byTag.get(k))
      .find((v) => v !== undefined);
  });
}
