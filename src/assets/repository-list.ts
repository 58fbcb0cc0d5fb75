import { allInOneWrite } from '../db/commit.js';
import { implicitlySendable } from '../db/implicit-read.js';
import type { Database, Tx } from '../db/pool.js';
import { preparedFrom, preparedQuery } from '../db/prepared.js';
import { WIRE_INSTANTS } from '../db/wire-instants.js';
import { totalFromPage } from '../master-data/list-query.js';
import { type Tag, tagsForOwners } from '../tags/repository.js';
import { type AssetListFilter, listPredicate, orderBy, type SqlQuery } from './list-predicate.js';
import { ASSET_COLUMNS, type AssetRow, LOCATION_JOIN, toAsset } from './repository.js';
import {
  broadPatterns,
  buildSearchPageSql,
  SEARCH_MATCH_MAX,
  type SearchHead,
  trigramSearchable,
} from './repository-search.js';
import type { Asset } from './schemas.js';

export type { AssetListFilter, SqlQuery } from './list-predicate.js';

/**
 * The two statements of one list request: the page and the total count, over the same
 * predicate. Exported so the plan test can EXPLAIN exactly what runs.
 *
 * They read `assets_in_org` (migration 0003): the organization's assets through a plain
 * view predicate rather than through row-level security, whose policies are security
 * barriers that keep non-leakproof operators such as LIKE from using the trigram index.
 */
export function buildAssetListSql(orgId: number, f: AssetListFilter): { page: SqlQuery; count: SqlQuery } {
  const { where, search, isActive, values, param } = listPredicate(orgId, f);
  if (search) where.push(search);
  const predicate = where.join('\n  AND ');
  const whereValues = [...values];

  // A text search's page is planned on every request, and each joined table costs more to
  // plan than the page costs to read: its current locations come after it (positionsOf).
  const from =
    f.searchPattern === undefined ? `${ASSET_COLUMNS}\nFROM assets_in_org a ${LOCATION_JOIN}` : OWN_COLUMNS;
  const page = `SELECT ${from}
WHERE ${predicate}
ORDER BY ${orderBy(f.sort)}
LIMIT ${param(f.limit)} OFFSET ${param(f.offset)}`;
  const count = countedTotal(f)
    ? countedTotalSql(isActive)
    : `SELECT count(*)::int AS total FROM assets_in_org a
WHERE ${predicate}`;
  return { page: { text: page, values }, count: { text: count, values: whereValues } };
}

/** The page of a text search: the assets' own columns, their current locations unread. */
const OWN_COLUMNS = `a.id, a.external_key, a.name, a.description, a.is_active, a.metadata,
  NULL::bigint AS location_id, NULL::text AS location_external_key,
  a.valid_from, a.valid_to, a.created_at, a.updated_at, a.deleted_at
FROM assets_in_org a`;

/** Whether the total is the organization's live, effective assets, by is_active at most. */
function countedTotal(f: AssetListFilter): boolean {
  return (
    !f.includeDeleted &&
    f.locationIds === undefined &&
    f.locationKeys === undefined &&
    f.externalKeys === undefined &&
    f.searchPattern === undefined
  );
}

/**
 * The live assets as counted by migration 0054's delta rows, less those outside their
 * validity window now: future-dated (assets_liveness) or expired (assets_expiry). The two
 * are disjoint (valid_to > valid_from). Equal to counting the list's predicate, without
 * reading every live row.
 */
function countedTotalSql(isActive: string | undefined): string {
  const active = isActive ? `AND ${isActive}` : '';
  const live = `a.org_id = $1 AND a.deleted_at IS NULL ${active}`;
  return `SELECT ((SELECT coalesce(sum(a.n), 0) FROM asset_count_deltas a WHERE a.org_id = $1 ${active})
  - (SELECT count(*) FROM assets_in_org a WHERE ${live} AND a.valid_from > now())
  - (SELECT count(*) FROM assets_in_org a WHERE ${live} AND a.valid_to <= now()))::int AS total`;
}

type SearchRow = Nullable<AssetRow & { tags: Tag[] }> & SearchHead;

/** The named search statement for the filter, when its pattern is one for it. */
function namedSearch(orgId: number, filter: AssetListFilter) {
  const pattern = filter.searchPattern;
  if (pattern === undefined || !trigramSearchable(pattern) || broadPatterns.has(orgId, pattern))
    return undefined;
  return { ...preparedFrom(buildSearchPageSql(orgId, filter)), types: WIRE_INSTANTS };
}

/**
 * The page and total the named search statement answered, or undefined when its match
 * passed the bound (the pattern is then remembered as broad, and the planned page answers).
 */
function searchPageOf(
  orgId: number,
  pattern: string,
  rows: SearchRow[],
): { assets: Asset[]; total: number } | undefined {
  const head = rows[0]!;
  if (head.matched > SEARCH_MATCH_MAX) {
    broadPatterns.add(orgId, pattern);
    return undefined;
  }
  // No page row: one row of the head alone (the page's columns null).
  const page = head.id === null ? [] : (rows as (AssetRow & { tags: Tag[] } & SearchHead)[]);
  return { assets: page.map((r) => toAsset(r, r.tags)), total: head.total };
}

/**
 * A text search's page as one implicit transaction (Database.readNamed: no BEGIN or
 * COMMIT), its only statement being the named search: undefined when the pattern is not
 * for it, a filter is a list of values, or the match passed the bound; listAssets in a
 * transaction answers then.
 */
export async function searchAssetsAtOnce(
  db: Database,
  orgId: number,
  filter: AssetListFilter,
): Promise<{ assets: Asset[]; total: number } | undefined> {
  const search = namedSearch(orgId, filter);
  // A filter by several keys or locations is an array, which an implicit read cannot send.
  if (!search?.values.every(implicitlySendable)) return undefined;
  const [result] = await db.readNamed(orgId, [search]);
  return searchPageOf(orgId, filter.searchPattern!, result!.rows as SearchRow[]);
}

export async function listAssets(
  tx: Tx,
  orgId: number,
  filter: AssetListFilter,
): Promise<{ assets: Asset[]; total: number }> {
  const pattern = filter.searchPattern;
  const search = namedSearch(orgId, filter);
  if (search) {
    const found = searchPageOf(orgId, pattern!, (await tx.query(search)).rows as SearchRow[]);
    if (found) return found;
  }
  const sql = buildAssetListSql(orgId, filter);
  // A text search's best plan depends on the pattern: it is planned for each request.
  const send = (q: SqlQuery) => (pattern !== undefined ? q : preparedFrom(q));
  const { rows } = await tx.query<AssetRow>({ ...send(sql.page), types: WIRE_INSTANTS });
  // The count (when the page does not tell the total), the tags and the locations each
  // depend on the page alone: they leave in one write (the pool pipelines).
  const known = totalFromPage(rows.length, filter);
  return withPlaces(
    tx,
    orgId,
    rows,
    known ?? (() => tx.query<{ total: number }>(send(sql.count)).then((r) => r.rows[0]!.total)),
    pattern !== undefined,
  );
}

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** The page's assets with their tags and, for a search's page, their current locations. */
async function withPlaces(
  tx: Tx,
  orgId: number,
  rows: AssetRow[],
  total: number | (() => Promise<number>),
  unplaced: boolean,
): Promise<{ assets: Asset[]; total: number }> {
  const ids = rows.map((r) => r.id);
  const [counted, tags, positions] = await allInOneWrite(tx, () => [
    typeof total === 'number' ? total : total(),
    tagsForOwners(tx, orgId, 'asset', ids),
    unplaced ? positionsOf(tx, orgId, ids) : undefined,
  ]);
  const assets = rows.map((r) =>
    toAsset(positions ? { ...r, ...positions.get(r.id) } : r, tags.get(r.id) ?? []),
  );
  return { assets, total: counted };
}

type AssetPlace = Pick<AssetRow, 'location_id' | 'location_external_key'>;

/** The current locations of the assets `ids` that have one, as LOCATION_JOIN reads them. */
async function positionsOf(tx: Tx, orgId: number, ids: number[]): Promise<Map<number, AssetPlace>> {
  const places = new Map<number, AssetPlace>();
  if (ids.length === 0) return places;
  const { rows } = await tx.query<AssetPlace & { asset_id: number }>(
    preparedQuery(
      `SELECT ap.asset_id, ap.location_id, l.external_key AS location_external_key
       FROM asset_positions ap LEFT JOIN locations l ON l.org_id = ap.org_id AND l.id = ap.location_id
       WHERE ap.org_id = $1 AND ap.asset_id = ANY($2::bigint[])`,
      [orgId, ids],
    ),
  );
  for (const { asset_id, ...place } of rows) places.set(asset_id, place);
  return places;
}
