import { allInOneWrite } from '../db/commit.js';
import { implicitlySendable } from '../db/implicit-read.js';
import type { Database, Tx } from '../db/pool.js';
import { type PreparedQuery, preparedFrom, preparedQuery, unnamedQuery } from '../db/prepared.js';
import { WIRE_INSTANTS } from '../db/wire-instants.js';
import { totalFromPage } from '../master-data/list-query.js';
import { type Tag, tagsForOwners } from '../tags/repository.js';
import { type AssetListFilter, listPredicate, orderBy, type SqlQuery } from './list-predicate.js';
import { ASSET_COLUMNS, type AssetRow, LOCATION_JOIN, toAsset } from './repository.js';
import {
  broadPatterns,
  buildSearchPageSql,
  PAGE_ROW_TAGS,
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

type PageRow = Nullable<AssetRow & { tags: Tag[] }>;
type SearchRow = PageRow & SearchHead;

/**
 * A list without a text search as one statement: buildAssetListSql's page (its locations
 * joined), each row's live tags (PAGE_ROW_TAGS) and the total. The total is the page's own
 * when it tells (totalFromPage's rule), else buildAssetListSql's count, which PostgreSQL
 * then runs: an InitPlan runs when its value is first needed, so a short page counts
 * nothing. One row per asset of the page, or one row of the total alone (the asset's
 * columns null) when the page is empty.
 */
export function buildListPageSql(orgId: number, f: AssetListFilter): SqlQuery {
  if (f.searchPattern !== undefined)
    throw new Error('a text search has its own statement (buildSearchPageSql)');
  const { page, count } = buildAssetListSql(orgId, f);
  // The page's LIMIT and OFFSET are its last two values.
  const limit = `$${page.values.length - 1}`;
  const offset = `$${page.values.length}`;
  const text = `WITH p AS MATERIALIZED (
${page.text}
)
SELECT t.total, a.*, g.tags
FROM (
  SELECT CASE WHEN c.n < ${limit} AND (c.n > 0 OR ${offset} = 0) THEN ${offset} + c.n
    ELSE (${count.text}) END::int AS total
  FROM (SELECT count(*) AS n FROM p) c
) t
LEFT JOIN p a ON true
${PAGE_ROW_TAGS}
ORDER BY ${orderBy(f.sort)}`;
  return { text, values: page.values };
}

/** The statement answering the filter's page by itself, with the rows' reading of it. */
interface OneStatement {
  query: PreparedQuery;
  /** The page and total the rows tell, or undefined when another way must answer. */
  answer(rows: unknown[]): { assets: Asset[]; total: number } | undefined;
}

/**
 * The one statement of the filter's page: a text search's named statement when the pattern
 * is one for it (repository-search.ts), the list's page statement without a text search.
 */
function oneStatement(orgId: number, filter: AssetListFilter): OneStatement | undefined {
  const pattern = filter.searchPattern;
  if (pattern === undefined) {
    return {
      query: preparedFrom(buildListPageSql(orgId, filter), WIRE_INSTANTS),
      answer: (rows) => pageOf(rows as PageRow[], (rows[0] as { total: number }).total),
    };
  }
  if (!trigramSearchable(pattern) || broadPatterns.has(orgId, pattern)) return undefined;
  return {
    query: preparedFrom(buildSearchPageSql(orgId, filter), WIRE_INSTANTS),
    answer: (rows) => searchPageOf(orgId, pattern, rows as SearchRow[]),
  };
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
  return pageOf(rows, head.total);
}

/** The assets of a one-statement page; an empty page is one row with the asset's columns null. */
function pageOf(rows: PageRow[], total: number): { assets: Asset[]; total: number } {
  const page = rows[0]!.id === null ? [] : (rows as (AssetRow & { tags: Tag[] })[]);
  return { assets: page.map((r) => toAsset(r, r.tags)), total };
}

/**
 * The filter's page as one implicit transaction (Database.readNamed: no BEGIN or COMMIT),
 * its only statement being the page's one statement: undefined when there is none for the
 * filter, a filter is a list of values, or a search's match passed the bound; listAssets in
 * a transaction answers then.
 */
export async function listAssetsAtOnce(
  db: Database,
  orgId: number,
  filter: AssetListFilter,
): Promise<{ assets: Asset[]; total: number } | undefined> {
  const one = oneStatement(orgId, filter);
  // A filter by several keys or locations is an array, which an implicit read cannot send.
  if (!one?.query.values.every(implicitlySendable)) return undefined;
  const [result] = await db.readNamed(orgId, [one.query]);
  return one.answer(result!.rows);
}

export async function listAssets(
  tx: Tx,
  orgId: number,
  filter: AssetListFilter,
): Promise<{ assets: Asset[]; total: number }> {
  const one = oneStatement(orgId, filter);
  if (one) {
    const found = one.answer((await tx.query(one.query)).rows);
    if (found) return found;
  }
  // A text search past the bound, or one whose pattern the trigram index cannot look up:
  // its page planned for its pattern (the best plan depends on it), on every request.
  const sql = buildAssetListSql(orgId, filter);
  const { rows } = await tx.query<AssetRow>(unnamedQuery(sql.page, WIRE_INSTANTS));
  // The count (when the page does not tell the total), the tags and the locations each
  // depend on the page alone: they leave in one write (the pool pipelines).
  const known = totalFromPage(rows.length, filter);
  return withPlaces(
    tx,
    orgId,
    rows,
    known ?? (() => tx.query<{ total: number }>(sql.count).then((r) => r.rows[0]!.total)),
  );
}

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** A planned search page's assets with their tags and current locations. */
async function withPlaces(
  tx: Tx,
  orgId: number,
  rows: AssetRow[],
  total: number | (() => Promise<number>),
): Promise<{ assets: Asset[]; total: number }> {
  const ids = rows.map((r) => r.id);
  const [counted, tags, positions] = await allInOneWrite(tx, () => [
    typeof total === 'number' ? total : total(),
    tagsForOwners(tx, orgId, 'asset', ids),
    positionsOf(tx, orgId, ids),
  ]);
  const assets = rows.map((r) => toAsset({ ...r, ...positions.get(r.id) }, tags.get(r.id) ?? []));
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
