import { allInOneWrite } from '../db/commit.js';
import type { Tx } from '../db/pool.js';
import { preparedFrom, unnamedQuery } from '../db/prepared.js';
import { WIRE_INSTANTS, type WireInstant } from '../db/wire-instants.js';
import {
  containsCondition,
  containsPattern,
  EFFECTIVE,
  type SortKey,
  totalFromPage,
} from '../master-data/list-query.js';

export interface HistoryRow {
  started_at: Date;
  location_id: number;
  location_external_key: string | null;
  /** Arrival at the next stay, or null for the current (newest) stay. */
  next_started_at: Date | null;
  last_seen_at: Date;
}

export interface SqlQuery {
  text: string;
  values: unknown[];
  /** How the rows' values are read (WIRE_INSTANTS), when not as node-postgres does. */
  types?: typeof WIRE_INSTANTS;
}

export interface Page {
  limit: number;
  offset: number;
}

export interface HistoryFilter {
  /** Inclusive bounds on the arrival (event_observed_at). */
  from?: Date;
  to?: Date;
  desc: boolean;
}

/**
 * The two statements of one history request: the page and the total count. Each row is a
 * stay with the arrival of the stay after it, looked up in the whole history (not only
 * inside `from`/`to`), so the last row of a window still measures up to the next arrival.
 * Both walk the stays primary key (org, asset, started_at) over the window only, never the whole history.
 */
export function historySql(
  orgId: number,
  assetId: number,
  filter: HistoryFilter,
  page: Page,
): { page: SqlQuery; count: SqlQuery } {
  const values: unknown[] = [orgId, assetId];
  const where = ['s.org_id = $1', 's.asset_id = $2'];
  if (filter.from) where.push(`s.started_at >= $${values.push(filter.from)}`);
  if (filter.to) where.push(`s.started_at <= $${values.push(filter.to)}`);
  const predicate = where.join(' AND ');
  const whereValues = [...values];
  const dir = filter.desc ? 'DESC' : 'ASC';
  const text = `SELECT w.started_at, w.last_seen_at, w.next_started_at, w.location_id,
  CASE WHEN l.valid_to IS NOT NULL AND l.valid_to <= now() THEN NULL ELSE l.external_key END AS location_external_key
FROM (
  SELECT s.started_at, s.last_seen_at, s.location_id,
    (SELECT n.started_at FROM stays n
      WHERE n.org_id = $1 AND n.asset_id = $2 AND n.started_at > s.started_at
      ORDER BY n.started_at LIMIT 1) AS next_started_at
  FROM stays s
  WHERE ${predicate}
  ORDER BY s.started_at ${dir}
  LIMIT $${values.push(page.limit)} OFFSET $${values.push(page.offset)}
) w
JOIN locations l ON l.org_id = $1 AND l.id = w.location_id
ORDER BY w.started_at ${dir}`;
  const count = `SELECT count(*)::int AS total FROM stays s WHERE ${predicate}`;
  return { page: { text, values }, count: { text: count, values: whereValues } };
}

/** A page of an asset's history and the total of its window. */
export async function historyPage(
  tx: Tx,
  orgId: number,
  assetId: number,
  filter: HistoryFilter,
  page: Page,
): Promise<{ rows: HistoryRow[]; total: number }> {
  const sql = historySql(orgId, assetId, filter, page);
  // One asset's stays by its index, whatever the window: the plan does not depend on the values.
  // Sent only when needed: most assets' histories fit in a page, so a count sent with it
  // would mostly be discarded (measured: 10% more CPU for a history of three stays).
  return withTotal<HistoryRow>(tx, preparedFrom(sql.page), preparedFrom(sql.count), page, false);
}

/**
 * The page's rows and the total of its window, from the page when it tells it
 * (totalFromPage), else from the count. With
 * `together` the count leaves with the page in one write, one round trip in all, and is
 * discarded when the page tells the total: for counts that are named (planned once) and
 * read no more rows than the page's OFFSET walk does. Otherwise it is sent only when needed.
 */
async function withTotal<R extends object>(
  tx: Tx,
  pageSql: SqlQuery,
  countSql: SqlQuery,
  page: Page,
  together: boolean,
): Promise<{ rows: R[]; total: number }> {
  const count = () => tx.query<{ total: number }>(countSql).then((r) => r.rows[0]!.total);
  const [{ rows }, counted] = await allInOneWrite(tx, () => [
    tx.query<R>(pageSql),
    together ? count() : undefined,
  ]);
  return { rows, total: totalFromPage(rows.length, page) ?? counted ?? (await count()) };
}

export interface ReportFilter {
  locationIds?: number[];
  locationKeys?: string[];
  assetIds?: number[];
  assetKeys?: string[];
  q?: string;
  includeDeleted: boolean;
  sort: SortKey[];
}

export interface ReportRow {
  asset_id: number;
  asset_external_key: string;
  asset_last_seen: WireInstant;
  asset_deleted_at: WireInstant | null;
  location_id: number | null;
  location_external_key: string | null;
}

/** Sort fields of the report and the column each orders by. */
const REPORT_SORT: Record<string, string> = {
  asset_last_seen: 'a.last_seen_at',
  asset_external_key: 'a.external_key',
  location_external_key: 'l.external_key',
};

/** The text `q` matches on the report; the expression of the assets_report_search index. */
const REPORT_SEARCH_TEXT = `lower((a.external_key || chr(1) || a.name || chr(1) || a.tag_values) COLLATE "und-x-icu")`;

/**
 * The two statements of one report request: the page and the total count, over the same
 * predicate. Exported so the plan test can EXPLAIN exactly what runs.
 *
 * Assets are read through `tracked_assets_in_org` (migrations 0006, 0042), the organization's
 * scanned assets by a plain view predicate rather than through row-level security: the
 * policy is a security barrier that keeps a non-leakproof operator such as LIKE from using
 * the trigram index for `q`.
 *
 * A location outside its window, or soft-deleted, is joined as no location at all, so it
 * shows as null, sorts as null and matches no location filter.
 */
export function reportSql(
  orgId: number,
  filter: ReportFilter,
  page: Page,
): { page: SqlQuery; count: SqlQuery } {
  const values: unknown[] = [orgId];
  const p = (v: unknown, cast = '') => `$${values.push(v)}${cast}`;
  const where = ['a.org_id = $1', EFFECTIVE('a')];
  if (!filter.includeDeleted) where.push('a.deleted_at IS NULL');
  if (filter.assetIds) where.push(`a.id = ANY(${p(filter.assetIds, '::bigint[]')})`);
  if (filter.assetKeys) where.push(`a.external_key = ANY(${p(filter.assetKeys, '::text[]')})`);
  const locationMatch = filter.locationIds
    ? `lf.id = ANY(${p(filter.locationIds, '::bigint[]')})`
    : filter.locationKeys
      ? `lf.external_key = ANY(${p(filter.locationKeys, '::text[]')})`
      : undefined;
  if (locationMatch) {
    where.push(`a.location_id IN (SELECT lf.id FROM locations lf
      WHERE lf.org_id = $1 AND ${locationMatch} AND lf.deleted_at IS NULL AND ${EFFECTIVE('lf')})`);
  }
  if (filter.q) where.push(containsCondition(REPORT_SEARCH_TEXT, containsPattern(filter.q), p, 'und-x-icu'));
  const predicate = where.join('\n  AND ');
  const whereValues = [...values];

  const sort = filter.sort.length ? filter.sort : [{ field: 'asset_last_seen', desc: true }];
  const order = sort.map((s) => `${REPORT_SORT[s.field]} ${s.desc ? 'DESC' : 'ASC'}`);
  // id last, in the direction of the last key: a single-key sort and its reverse are
  // each one walk of an (org_id, key, id) index.
  order.push(`a.id ${sort.at(-1)!.desc ? 'DESC' : 'ASC'}`);
  const locationJoin = `LEFT JOIN locations l ON l.org_id = a.org_id AND l.id = a.location_id
  AND l.deleted_at IS NULL AND ${EFFECTIVE('l')}`;
  // Nothing but the shown key needs the asset row: the page is ordered and cut from the
  // positions alone (which carry the asset's validity and deletion), and only its rows
  // join their assets. Otherwise a sort by location key joined every scanned position to
  // its asset, a hash of all the organization's assets where few of them are scanned.
  const positionsOnly = !filter.q && !filter.assetKeys && !sort.some((s) => s.field === 'asset_external_key');
  const text = positionsOnly
    ? `SELECT w.asset_id, x.external_key AS asset_external_key, w.asset_last_seen, w.asset_deleted_at,
  w.location_id, w.location_external_key
FROM (
  SELECT a.id AS asset_id, a.last_seen_at AS asset_last_seen, a.deleted_at AS asset_deleted_at,
    l.id AS location_id, l.external_key AS location_external_key
  FROM tracked_positions_in_org a
  ${locationJoin}
  WHERE ${predicate}
  ORDER BY ${order.join(', ')}
  LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}
) w
JOIN assets x ON x.org_id = $1 AND x.id = w.asset_id
ORDER BY ${order
        .join(', ')
        .replace(/a\.last_seen_at/g, 'w.asset_last_seen')
        .replace(/l\.external_key/g, 'w.location_external_key')
        .replace(/a\.id/g, 'w.asset_id')}`
    : `SELECT a.id AS asset_id, a.external_key AS asset_external_key, a.last_seen_at AS asset_last_seen,
  a.deleted_at AS asset_deleted_at, l.id AS location_id, l.external_key AS location_external_key
FROM tracked_assets_in_org a
${locationJoin}
WHERE ${predicate}
ORDER BY ${order.join(', ')}
LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  // Without a filter on the asset's own columns the count reads the positions alone, which
  // carry the asset's validity and deletion (migration 0043_asset_positions_validity).
  const counted = filter.q || filter.assetKeys ? 'tracked_assets_in_org' : 'tracked_positions_in_org';
  const count = `SELECT count(*)::int AS total FROM ${counted} a
WHERE ${predicate}`;
  return { page: { text, values }, count: { text: count, values: whereValues } };
}

export async function reportPage(
  tx: Tx,
  orgId: number,
  filter: ReportFilter,
  page: Page,
): Promise<{ rows: ReportRow[]; total: number }> {
  const sql = reportSql(orgId, filter, page);
  // A text search's best plan depends on the pattern: it is planned for each request.
  const search = filter.q !== undefined;
  const send = (q: SqlQuery, types?: typeof WIRE_INSTANTS) =>
    search ? unnamedQuery(q, types) : preparedFrom(q, types);
  // The report covers every tracked asset, so its first pages are full and need the count;
  // a text search's count would be planned in vain whenever its page is short.
  return withTotal<ReportRow>(tx, send(sql.page, WIRE_INSTANTS), send(sql.count), page, !search);
}
