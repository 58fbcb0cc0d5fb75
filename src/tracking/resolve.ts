import { int8Array, textArray } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';

export type TagType = 'rfid' | 'ble' | 'barcode';

/** Same normalisation as the tags.match_key column (migration 0005) and tag_match_key() (0064). */
export function matchKey(tagType: TagType, value: string): string {
  if (tagType === 'barcode' || isMatchKey(value)) return value;
  const compact = value
    .replace(/[\s:-]/g, '')
    .toUpperCase()
    .replace(/^0+/, '');
  return compact === '' ? '0' : compact;
}

/**
 * Whether matchKey would leave `value` as it is: no separators, no lower case, no leading
 * zero. Readers mostly send EPCs so, and three string copies per read were a share of what
 * ingest allocates at a read or two per message.
 */
function isMatchKey(value: string): boolean {
  if (value.length === 0 || value.charCodeAt(0) === 48) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // 0-9 and A-Z; anything else (lower case, separators, the rest of Unicode) goes the long way.
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90))) return false;
  }
  return true;
}

/**
 * Assets holding the given tag match keys (live attachments to live assets only). Where two
 * live tags share a key (tags of two types with one value, or RFID spellings attached
 * before migration 0064 refused them) the earliest attached wins, the same on every
 * lookup: the rows come latest first and the Map keeps the last.
 */
export async function assetsByTagKeys(tx: Tx, orgId: number, keys: string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await tx.query<{ match_key: string; asset_id: number }>(
    `SELECT t.match_key, t.asset_id FROM tags t JOIN assets a ON a.id = t.asset_id AND a.org_id = t.org_id
     WHERE t.org_id = $1 AND t.match_key = ANY($2::text[]) AND t.detached_at IS NULL AND a.deleted_at IS NULL
     ORDER BY t.id DESC`,
    [orgId, textArray(keys)],
  );
  return new Map(rows.map((r) => [r.match_key, r.asset_id]));
}

/** Locations by tag match key (handhelds may scan a location's tag); the earliest attached wins, as above. */
export async function locationsByTagKeys(
  tx: Tx,
  orgId: number,
  keys: string[],
): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await tx.query<{ match_key: string; location_id: number }>(
    `SELECT t.match_key, t.location_id FROM tags t JOIN locations l ON l.id = t.location_id AND l.org_id = t.org_id
     WHERE t.org_id = $1 AND t.match_key = ANY($2::text[]) AND t.detached_at IS NULL AND l.deleted_at IS NULL
     ORDER BY t.id DESC`,
    [orgId, textArray(keys)],
  );
  return new Map(rows.map((r) => [r.match_key, r.location_id]));
}

/** (reader, antenna) → location: the antenna's own point, else the reader-wide one. */
export async function scanPointsOf(
  tx: Tx,
  orgId: number,
  readerId: number,
): Promise<Map<number | null, number>> {
  const { rows } = await tx.query<{ antenna: number | null; location_id: number }>(
    `SELECT sp.antenna, sp.location_id FROM scan_points sp JOIN locations l ON l.id = sp.location_id
     WHERE sp.org_id = $1 AND sp.reader_id = $2 AND l.deleted_at IS NULL`,
    [orgId, readerId],
  );
  return new Map(rows.map((r) => [r.antenna, r.location_id]));
}

/** (reader, antenna) → location for several readers at once: scanPointsOf per reader, in one query. */
export async function scanPointsOfReaders(
  tx: Tx,
  orgId: number,
  readerIds: number[],
): Promise<Map<number, Map<number | null, number>>> {
  const out = new Map<number, Map<number | null, number>>(readerIds.map((id) => [id, new Map()]));
  if (readerIds.length === 0) return out;
  const { rows } = await tx.query<{ reader_id: number; antenna: number | null; location_id: number }>(
    `SELECT sp.reader_id, sp.antenna, sp.location_id FROM scan_points sp JOIN locations l ON l.id = sp.location_id
     WHERE sp.org_id = $1 AND sp.reader_id = ANY($2::bigint[]) AND l.deleted_at IS NULL`,
    [orgId, int8Array(readerIds)],
  );
  for (const r of rows) out.get(r.reader_id)?.set(r.antenna, r.location_id);
  return out;
}
