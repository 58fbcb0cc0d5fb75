import { allInOneWrite } from '../db/commit.js';
import type { Tx } from '../db/pool.js';
import { preparedFrom, preparedQuery, unnamedQuery } from '../db/prepared.js';
import { textPer } from '../db/statement-text.js';
import { WIRE_INSTANTS, type WireInstant, wireOf, wireOrNullOf } from '../db/wire-instants.js';
import { type LockOptions, takeXactLock } from '../db/xact-lock.js';
import {
  containsCondition,
  containsPattern,
  EFFECTIVE,
  type SortKey,
  totalFromPage,
} from '../master-data/list-query.js';
import { tagsForOwners } from '../tags/repository.js';
import type { Location } from './schemas.js';

/**
 * Locations in SQL. Every function takes the transaction and the organization and filters
 * on `org_id` (row-level security is the second wall, not the first).
 */

export interface LocationRow {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  parent_id: number | null;
  parent_external_key: string | null;
  valid_from: Date | WireInstant;
  valid_to: Date | WireInstant | null;
  created_at: Date | WireInstant;
  updated_at: Date | WireInstant;
  deleted_at: Date | WireInstant | null;
}

/** The read shape's columns of the location aliased `a`, all but its parent's key. */
export const ownColumns = (a: string) =>
  `${a}.id, ${a}.external_key, ${a}.name, ${a}.description, ${a}.is_active, ${a}.parent_id,
  ${a}.valid_from, ${a}.valid_to, ${a}.created_at, ${a}.updated_at, ${a}.deleted_at`;

/** The read shape's columns; `p` is the parent, joined whatever its state. */
export const COLUMNS = `${ownColumns('l')}, p.external_key AS parent_external_key`;

export const PARENT_JOIN = 'LEFT JOIN locations p ON p.org_id = l.org_id AND p.id = l.parent_id';

const TREE_LOCK_CLASS = 7110;

/**
 * Serialises the organization's tree mutations (re-parent, create under a parent, delete)
 * until the transaction commits, so two concurrent moves cannot build a cycle and a delete
 * cannot miss a child being added. Lock order: keyspace, then tree, then rows. Released
 * before the COMMIT's WAL flush unless `heldThroughFlush`, as lockKeyspace.
 */
export async function lockTree(tx: Tx, orgId: number, options: LockOptions = {}): Promise<void> {
  await takeXactLock(tx, TREE_LOCK_CLASS, orgId, options);
}

/** The database clock truncated to the millisecond (the wire's precision). */
export async function dbNow(tx: Tx): Promise<Date> {
  const { rows } = await tx.query<{ now: Date }>('SELECT now_ms() AS now');
  return rows[0]!.now;
}

/** Rows in wire form, each with its attached tags. */
export async function hydrate(tx: Tx, orgId: number, rows: LocationRow[]): Promise<Location[]> {
  const tags = await tagsForOwners(
    tx,
    orgId,
    'location',
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    external_key: r.external_key,
    name: r.name,
    description: r.description,
    is_active: r.is_active,
    parent_id: r.parent_id,
    parent_external_key: r.parent_external_key,
    tags: tags.get(r.id) ?? [],
    valid_from: wireOf(r.valid_from),
    valid_to: wireOrNullOf(r.valid_to),
    created_at: wireOf(r.created_at),
    updated_at: wireOf(r.updated_at),
    deleted_at: wireOrNullOf(r.deleted_at),
  }));
}

const liveLocationSql = textPer(
  (lock: boolean) => `SELECT ${COLUMNS} FROM locations l ${PARENT_JOIN}
     WHERE l.org_id = $1 AND l.id = $2 AND l.deleted_at IS NULL${lock ? ' FOR UPDATE OF l' : ''}`,
);

/**
 * A live (not soft-deleted) location by id, whatever its validity window; null when
 * missing, deleted or another organization's. `lock` takes the row for update.
 */
export async function findLiveLocation(
  tx: Tx,
  orgId: number,
  id: number,
  lock = false,
): Promise<Location | null> {
  const { rows } = await tx.query<LocationRow>(
    preparedQuery(liveLocationSql(lock), [orgId, id], WIRE_INSTANTS),
  );
  if (rows.length === 0) return null;
  return (await hydrate(tx, orgId, rows))[0]!;
}

/** Id of the live location holding `key` (case-sensitive), or null. */
export async function findLiveIdByKey(tx: Tx, orgId: number, key: string): Promise<number | null> {
  const { rows } = await tx.query<{ id: number }>(
    preparedQuery('SELECT id FROM locations WHERE org_id = $1 AND external_key = $2 AND deleted_at IS NULL', [
      orgId,
      key,
    ]),
  );
  return rows[0]?.id ?? null;
}

/** True when `id` is a live location of the organization (its window does not matter). */
export async function liveLocationExists(tx: Tx, orgId: number, id: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    preparedQuery('SELECT 1 FROM locations WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL', [
      orgId,
      id,
    ]),
  );
  return rowCount === 1;
}

export interface NewLocation {
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  parent_id: number | null;
  /** Wire-form instants. */
  valid_from: string;
  valid_to: string | null;
  /** The creation instant: created_at and updated_at. */
  now: Date;
}

export async function insertLocation(tx: Tx, orgId: number, l: NewLocation): Promise<number> {
  const { rows } = await tx.query<{ id: number }>(
    preparedQuery(
      `INSERT INTO locations
       (org_id, external_key, name, description, is_active, parent_id, valid_from, valid_to, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $9, $9)
     RETURNING id`,
      [
        orgId,
        l.external_key,
        l.name,
        l.description,
        l.is_active,
        l.parent_id,
        l.valid_from,
        l.valid_to,
        l.now,
      ],
    ),
  );
  return rows[0]!.id;
}

export interface LocationChanges {
  name?: string;
  description?: string | null;
  is_active?: boolean;
  parent_id?: number | null;
  valid_from?: string;
  valid_to?: string | null;
}

const CHANGE_CASTS: Record<keyof LocationChanges, string> = {
  name: '',
  description: '',
  is_active: '',
  parent_id: '',
  valid_from: '::timestamptz',
  valid_to: '::timestamptz',
};

/**
 * Applies the changes present and always advances updated_at, strictly, even for an
 * empty change set (every accepted PATCH advances it).
 */
export async function updateLocation(
  tx: Tx,
  orgId: number,
  id: number,
  changes: LocationChanges,
): Promise<void> {
  const params: unknown[] = [orgId, id];
  const sets = ["updated_at = greatest(now_ms(), updated_at + interval '1 millisecond')"];
  for (const [column, cast] of Object.entries(CHANGE_CASTS) as [keyof LocationChanges, string][]) {
    if (!(column in changes)) continue;
    params.push(changes[column]);
    sets.push(`${column} = $${params.length}${cast}`);
  }
  await tx.query(`UPDATE locations SET ${sets.join(', ')} WHERE org_id = $1 AND id = $2`, params);
}

export async function renameLocation(tx: Tx, orgId: number, id: number, key: string): Promise<void> {
  await tx.query(
    `UPDATE locations SET external_key = $3,
       updated_at = greatest(now_ms(), updated_at + interval '1 millisecond')
     WHERE org_id = $1 AND id = $2`,
    [orgId, id, key],
  );
}

export async function softDeleteLocation(tx: Tx, orgId: number, id: number): Promise<void> {
  await tx.query(
    `UPDATE locations SET deleted_at = n.now, updated_at = greatest(n.now, updated_at + interval '1 millisecond')
     FROM (SELECT now_ms() AS now) n
     WHERE org_id = $1 AND id = $2`,
    [orgId, id],
  );
}

/** Live child locations (a live location's live descendants all hang below a live child). */
export async function countLiveChildren(tx: Tx, orgId: number, id: number): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM locations WHERE org_id = $1 AND parent_id = $2 AND deleted_at IS NULL',
    [orgId, id],
  );
  return rows[0]!.n;
}

/** Live assets placed directly at the location. */
export async function countPlacedAssets(tx: Tx, orgId: number, id: number): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM asset_positions p JOIN assets a ON a.org_id = p.org_id AND a.id = p.asset_id
     WHERE p.org_id = $1 AND p.location_id = $2 AND a.deleted_at IS NULL`,
    [orgId, id],
  );
  return rows[0]!.n;
}

export interface ListFilters {
  parent_id?: number[];
  parent_external_key?: string[];
  external_key?: string[];
  is_active?: boolean;
  include_deleted: boolean;
  q?: string;
  sort: SortKey[];
  limit: number;
  offset: number;
}

export const SORT_FIELDS = ['external_key', 'name', 'created_at'] as const;

export interface SqlQuery {
  text: string;
  values: unknown[];
}

const SORT_COLUMNS: Record<string, string> = {
  external_key: 'l.external_key',
  name: 'l.name',
  created_at: 'l.created_at',
};

/**
 * Requested keys (default external_key), then id; id runs in the direction of the last
 * key (as on assets), so a descending single-key sort is the exact reverse of the
 * ascending one and each is one walk of an (org_id, key, id) index.
 */
function orderBy(sort: SortKey[]): string {
  const keys = sort.length > 0 ? sort : [{ field: 'external_key', desc: false }];
  const parts = keys.map((k) => `${SORT_COLUMNS[k.field]} ${k.desc ? 'DESC' : 'ASC'}`);
  parts.push(`l.id ${keys[keys.length - 1]!.desc ? 'DESC' : 'ASC'}`);
  return parts.join(', ');
}

/** Whether a list filters by text (`q`), whose statements are planned for their pattern. */
export const hasSearch = (f: Pick<ListFilters, 'q'>): boolean => f.q !== undefined && f.q !== '';

/**
 * The two statements of one list request: the page and the total, over one predicate.
 * Exported so the plan test EXPLAINs exactly what runs. They read `locations_in_org`
 * (migration 0004) rather than the table under row-level security, whose policy would
 * keep LIKE (`q`) from using the trigram index.
 */
export function buildListQuery(orgId: number, f: ListFilters): { page: SqlQuery; count: SqlQuery } {
  const values: unknown[] = [orgId];
  const add = (value: unknown, cast = '') => {
    values.push(value);
    return `$${values.length}${cast}`;
  };
  const where = ['l.org_id = $1', EFFECTIVE('l')];
  if (!f.include_deleted) where.push('l.deleted_at IS NULL');
  if (f.is_active !== undefined) where.push(`l.is_active = ${add(f.is_active)}`);
  if (f.external_key) where.push(`l.external_key = ANY(${add(f.external_key, '::text[]')})`);
  if (f.parent_id) where.push(`l.parent_id = ANY(${add(f.parent_id, '::bigint[]')})`);
  if (f.parent_external_key) {
    // A key lookup: live, currently effective parents only (list rule 4), as assets do
    // for location_external_key.
    where.push(`l.parent_id IN (SELECT pk.id FROM locations pk
      WHERE pk.org_id = $1 AND pk.deleted_at IS NULL AND ${EFFECTIVE('pk')}
        AND pk.external_key = ANY(${add(f.parent_external_key, '::text[]')}))`);
  }
  if (hasSearch(f)) where.push(containsCondition('l.search_text', containsPattern(f.q!), add));
  const predicate = where.join('\n  AND ');
  const countValues = [...values];
  const page = `SELECT ${COLUMNS}
FROM locations_in_org l ${PARENT_JOIN}
WHERE ${predicate}
ORDER BY ${orderBy(f.sort)}
LIMIT ${add(f.limit)} OFFSET ${add(f.offset)}`;
  const count = `SELECT count(*)::int AS total FROM locations_in_org l
WHERE ${predicate}`;
  return { page: { text: page, values }, count: { text: count, values: countValues } };
}

export async function listLocations(
  tx: Tx,
  orgId: number,
  f: ListFilters,
): Promise<{ data: Location[]; total: number }> {
  const sql = buildListQuery(orgId, f);
  // Without a text search both statements are named, and the caller plans them generically
  // (LocationService.list; the plan tests hold those plans to indexes); a search's are
  // planned for their pattern.
  const named = !hasSearch(f);
  const page = named ? preparedFrom(sql.page, WIRE_INSTANTS) : unnamedQuery(sql.page, WIRE_INSTANTS);
  const count = named ? preparedFrom(sql.count) : sql.count;
  const { rows } = await tx.query<LocationRow>(page);
  // The count (when the page does not tell the total) and the tags depend on the page
  // alone, so they leave in one write.
  const known = totalFromPage(rows.length, f);
  const [total, data] = await allInOneWrite(tx, () => [
    known ?? tx.query<{ total: number }>(count).then((r) => r.rows[0]!.total),
    hydrate(tx, orgId, rows),
  ]);
  return { data, total };
}
