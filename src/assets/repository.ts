import type { Database, Tx } from '../db/pool.js';
import { preparedQuery } from '../db/prepared.js';
import { textPer } from '../db/statement-text.js';
import { WIRE_INSTANTS, type WireInstant, wireOf, wireOrNullOf } from '../db/wire-instants.js';
import { autoKeyPrefix, CHOSEN_KEY, slotChoice } from '../master-data/auto-key.js';
import { ownerTagsRead, tagsForOwners, tagsOfRows } from '../tags/repository.js';
import type { Asset } from './schemas.js';

/**
 * SQL of the assets resource. Every function takes the transaction and the organization
 * and filters on org_id (row-level security is the second wall). Timestamps come from
 * `now_ms()` (millisecond precision, the wire's) and go back out through toWire; the reads
 * (`WIRE_INSTANTS`) have them in the wire's form already.
 */
export interface AssetRow {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  metadata: Record<string, unknown>;
  location_id: number | null;
  location_external_key: string | null;
  valid_from: Date | WireInstant;
  valid_to: Date | WireInstant | null;
  created_at: Date | WireInstant;
  updated_at: Date | WireInstant;
  deleted_at: Date | WireInstant | null;
}

/** Columns of the read shape from `assets a` joined to its position `ap` and location `l`. */
export const ASSET_COLUMNS = `a.id, a.external_key, a.name, a.description, a.is_active, a.metadata,
  ap.location_id, l.external_key AS location_external_key,
  a.valid_from, a.valid_to, a.created_at, a.updated_at, a.deleted_at`;

/**
 * The current location of `a` (scan data, kept in asset_positions by ingest: migration
 * 0042); its key is shown while the location row exists.
 */
export const LOCATION_JOIN = `LEFT JOIN asset_positions ap ON ap.org_id = a.org_id AND ap.asset_id = a.id
  LEFT JOIN locations l ON l.org_id = a.org_id AND l.id = ap.location_id`;

/** Strictly later than the stored value, so every accepted write advances updated_at. */
const ADVANCE_UPDATED_AT = "greatest(now_ms(), updated_at + interval '1 millisecond')";

export function toAsset(row: AssetRow, tags: Asset['tags']): Asset {
  return {
    id: row.id,
    external_key: row.external_key,
    name: row.name,
    description: row.description,
    is_active: row.is_active,
    metadata: row.metadata,
    location_id: row.location_id,
    location_external_key: row.location_external_key,
    tags,
    valid_from: wireOf(row.valid_from),
    valid_to: wireOrNullOf(row.valid_to),
    created_at: wireOf(row.created_at),
    updated_at: wireOf(row.updated_at),
    deleted_at: wireOrNullOf(row.deleted_at),
  };
}

/** Rows with their attached tags, in the rows' order. */
export async function withTags(tx: Tx, orgId: number, rows: AssetRow[]): Promise<Asset[]> {
  const tags = await tagsForOwners(
    tx,
    orgId,
    'asset',
    rows.map((r) => r.id),
  );
  return rows.map((r) => toAsset(r, tags.get(r.id) ?? []));
}

/** The live asset `id` and its tags, read as one implicit transaction (Database.readNamed). */
export async function readLiveAsset(db: Database, orgId: number, id: number): Promise<Asset | null> {
  const [asset, tags] = await db.readNamed(orgId, [
    preparedQuery(liveAssetSql(false), [orgId, id], WIRE_INSTANTS),
    ownerTagsRead(orgId, 'asset', id),
  ]);
  const row = asset!.rows[0] as AssetRow | undefined;
  return row ? toAsset(row, tagsOfRows(tags!.rows)) : null;
}

const liveAssetSql = textPer(
  (lock: boolean) => `SELECT ${ASSET_COLUMNS} FROM assets a ${LOCATION_JOIN}
       WHERE a.org_id = $1 AND a.id = $2 AND a.deleted_at IS NULL
       ${lock ? 'FOR UPDATE OF a' : ''}`,
);

/** A live asset, whatever its validity window; `lock` takes the row for update. */
export async function findLiveAsset(
  tx: Tx,
  orgId: number,
  id: number,
  options: { lock?: boolean } = {},
): Promise<Asset | null> {
  // Both statements leave together (the pool pipelines): the tags are asked for by the id
  // requested, not by the row found, so they need not wait for the asset's answer. With
  // `lock`, the tags are read once the row is locked, as before.
  const [{ rows }, tags] = await Promise.all([
    tx.query<AssetRow>(preparedQuery(liveAssetSql(options.lock === true), [orgId, id], WIRE_INSTANTS)),
    tagsForOwners(tx, orgId, 'asset', [id]),
  ]);
  const row = rows[0];
  return row ? toAsset(row, tags.get(row.id) ?? []) : null;
}

/** The live asset other than `exceptId` that holds `key`, or null. */
export async function liveKeyHolder(
  tx: Tx,
  orgId: number,
  key: string,
  exceptId?: number,
): Promise<number | null> {
  const { rows } = await tx.query<{ id: number }>(
    preparedQuery(
      `SELECT id FROM assets WHERE org_id = $1 AND external_key = $2 AND deleted_at IS NULL
       AND ($3::bigint IS NULL OR id <> $3)`,
      [orgId, key, exceptId ?? null],
    ),
  );
  return rows[0]?.id ?? null;
}

export interface NewAsset {
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  metadata: Record<string, unknown>;
  /** Wire-form instants; valid_from null means the creation instant. */
  valid_from: string | null;
  valid_to: string | null;
}

/** A new row in the read shape: a new asset has no current location. */
const NEW_ROW_COLUMNS = `id, external_key, name, description, is_active, metadata,
       NULL::bigint AS location_id, NULL::text AS location_external_key,
       valid_from, valid_to, created_at, updated_at, deleted_at`;

/** A new asset's values after its key, in the order both inserts take them. */
const newAssetValues = (a: Omit<NewAsset, 'external_key'>) => [
  a.name,
  a.description,
  a.is_active,
  JSON.stringify(a.metadata),
  a.valid_from,
  a.valid_to,
];

/**
 * Inserts a live asset and answers its row as read back (a new asset has no current
 * location, and its tags, if any, are attached after it); created_at, updated_at and a
 * defaulted valid_from are one instant.
 */
export async function insertAsset(tx: Tx, orgId: number, a: NewAsset): Promise<AssetRow> {
  const { rows } = await tx.query<AssetRow>(
    preparedQuery(INSERT_ASSET, [orgId, a.external_key, ...newAssetValues(a)]),
  );
  return rows[0]!;
}

// Built once, so prepared() finds the name by the same string each time (../db/statement-text.ts).
const INSERT_ASSET = `WITH clock AS (SELECT now_ms() AS now)
     INSERT INTO assets (org_id, external_key, name, description, is_active, metadata,
                         valid_from, valid_to, created_at, updated_at)
     SELECT $1, $2, $3, $4, $5, $6::jsonb, coalesce($7::timestamptz, clock.now), $8::timestamptz,
            clock.now, clock.now
     FROM clock
     RETURNING ${NEW_ROW_COLUMNS}`;

/** An instant in wire form (toWire: RFC 3339, milliseconds, UTC), for years 1-9999. */
const WIRE = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * insertAsset with the lowest free auto key (slotChoice) and its `asset.created` event, in
 * one statement: sent behind lockKeyspace and with the COMMIT behind it, a keyless create
 * is one round trip, and the lock is held for this statement alone. `event` is the event
 * as the caller built it; every field the row holds is set from the row, so the payload is
 * the asset as the answer shows it (a new asset has no location and, here, no tags).
 */
export async function insertAssetWithAutoKey(
  tx: Tx,
  orgId: number,
  a: Omit<NewAsset, 'external_key'>,
  event: { type: string; payload: object },
): Promise<AssetRow> {
  const { rows } = await tx.query<AssetRow>(
    preparedQuery(INSERT_ASSET_WITH_AUTO_KEY, [
      orgId,
      'assets',
      autoKeyPrefix('assets'),
      ...newAssetValues(a),
      event.type,
      JSON.stringify(event.payload),
    ]),
  );
  return rows[0]!;
}

const INSERT_ASSET_WITH_AUTO_KEY = `WITH clock AS (SELECT now_ms() AS now),
     ${slotChoice('assets')},
     a AS (
       INSERT INTO assets (org_id, external_key, name, description, is_active, metadata,
                           valid_from, valid_to, created_at, updated_at)
       SELECT $1, ${CHOSEN_KEY}, $4, $5, $6, $7::jsonb, coalesce($8::timestamptz, clock.now), $9::timestamptz,
              clock.now, clock.now
       FROM clock, found
       RETURNING *),
     e AS (
       INSERT INTO events (org_id, type, occurred_at, subject, location_ids, payload)
       SELECT $1, $10, now_ms(), 'asset:' || a.id, '{}', $11::jsonb || jsonb_build_object(
         'id', a.id, 'external_key', a.external_key, 'name', a.name, 'description', a.description,
         'is_active', a.is_active, 'metadata', a.metadata,
         'valid_from', ${WIRE('a.valid_from')}, 'valid_to', ${WIRE('a.valid_to')},
         'created_at', ${WIRE('a.created_at')}, 'updated_at', ${WIRE('a.updated_at')})
       FROM a)
     SELECT ${NEW_ROW_COLUMNS} FROM a`;

/** Columns PATCH may set, with their values (timestamps in wire form). */
export interface AssetChanges {
  name?: string;
  description?: string | null;
  is_active?: boolean;
  metadata?: Record<string, unknown>;
  valid_from?: string;
  valid_to?: string | null;
}

const CHANGE_CASTS: Record<keyof AssetChanges, string> = {
  name: '',
  description: '',
  is_active: '',
  metadata: '::jsonb',
  valid_from: '::timestamptz',
  valid_to: '::timestamptz',
};

/** Applies the changes (possibly none) to a live asset and advances updated_at. */
/** Applies `changes` to a live asset and returns its row as read after (null: none). */
export async function updateAsset(
  tx: Tx,
  orgId: number,
  id: number,
  changes: AssetChanges,
): Promise<AssetRow | null> {
  const values: unknown[] = [orgId, id];
  const sets = [`updated_at = ${ADVANCE_UPDATED_AT}`];
  for (const [column, cast] of Object.entries(CHANGE_CASTS) as [keyof AssetChanges, string][]) {
    if (!(column in changes)) continue;
    const value = changes[column];
    values.push(column === 'metadata' ? JSON.stringify(value) : value);
    sets.push(`${column} = $${values.length}${cast}`);
  }
  // At most one text per set of columns changed: 64 named statements.
  const { rows } = await tx.query<AssetRow>(
    preparedQuery(
      `WITH a AS (
       UPDATE assets SET ${sets.join(', ')} WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL
       RETURNING *)
     SELECT ${ASSET_COLUMNS} FROM a ${LOCATION_JOIN}`,
      values,
    ),
  );
  return rows[0] ?? null;
}

export async function setExternalKey(tx: Tx, orgId: number, id: number, key: string): Promise<void> {
  await tx.query(
    preparedQuery(
      `UPDATE assets SET external_key = $3, updated_at = ${ADVANCE_UPDATED_AT}
     WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [orgId, id, key],
    ),
  );
}

/** Soft-deletes a live asset (deleted_at and updated_at one instant); false when there is none. */
export async function softDeleteAsset(tx: Tx, orgId: number, id: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    preparedQuery(
      `WITH clock AS (SELECT now_ms() AS now)
     UPDATE assets SET deleted_at = greatest(clock.now, updated_at + interval '1 millisecond'),
                       updated_at = greatest(clock.now, updated_at + interval '1 millisecond')
     FROM clock WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [orgId, id],
    ),
  );
  return rowCount === 1;
}
