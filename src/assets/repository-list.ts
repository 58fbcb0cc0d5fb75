import { allInOneWrite } from '../db/commit.js';
import type { Tx } from '../db/pool.js';
import { preparedFrom, preparedQuery } from '../db/prepared.js';
import { WIRE_INSTANTS } from '../db/wire-instants.js';
import { EFFECTIVE, type SortKey, totalFromPage } from '../master-data/list-query.js';
import { tagsForOwners } from '../tags/repository.js';
import { ASSET_COLUMNS, type AssetRow, LOCATION_JOIN, toAsset } from './repository.js';
import type { Asset } from './schemas.js';

/** GET /api/v1/assets, decoded: every value already validated. */
export interface AssetListFilter {
  locationIds?: number[];
  locationKeys?: string[];
  externalKeys?: string[];
  isActive?: boolean;
  includeDeleted: boolean;
  /** LIKE pattern over search_text (containsPattern); absent for no text filter. */
  searchPattern?: string;
  sort: SortKey[];
  limit: number;
  offset: number;
}

export interface SqlQuery {
  text: string;
  values: unknown[];
}

const SORT_COLUMNS: Record<string, string> = {
  external_key: 'a.external_key',
  name: 'a.name',
  created_at: 'a.created_at',
  updated_at: 'a.updated_at',
};

/**
 * Requested keys (default external_key), then id; id runs in the direction of the last
 * key, so a descending single-key sort is the exact reverse of the ascending one and each
 * is one walk of an (org_id, key, id) index.
 */
function orderBy(sort: SortKey[]): string {
  const keys = sort.length > 0 ? sort : [{ field: 'external_key', desc: false }];
  const parts = keys.map((k) => `${SORT_COLUMNS[k.field]} ${k.desc ? 'DESC' : 'ASC'}`);
  parts.push(`a.id ${keys[keys.length - 1]!.desc ? 'DESC' : 'ASC'}`);
  return parts.join(', ');
}

/**
 * The two statements of one list request: the page and the total count, over the same
 * predicate. Exported so the plan test can EXPLAIN exactly what runs.
 *
 * They read `assets_in_org` (migration 0003): the organization's assets through a plain
 * view predicate rather than through row-level security, whose policies are security
 * barriers that keep non-leakproof operators such as LIKE from using the trigram index.
 */
export function buildAssetListSql(orgId: number, f: AssetListFilter): { page: SqlQuery; count: SqlQuery } {
  const values: unknown[] = [orgId];
  const param = (value: unknown, cast = '') => {
    values.push(value);
    return `$${values.length}${cast}`;
  };
  const where = ['a.org_id = $1', EFFECTIVE('a')];
  if (!f.includeDeleted) where.push('a.deleted_at IS NULL');
  const isActive = f.isActive === undefined ? undefined : `a.is_active = ${param(f.isActive)}`;
  if (isActive) where.push(isActive);
  if (f.externalKeys) where.push(`a.external_key = ANY(${param(f.externalKeys, '::text[]')})`);
  // Placed assets are found through their positions' (org_id, location_id) index.
  if (f.locationIds) {
    where.push(`a.id IN (SELECT pf.asset_id FROM asset_positions pf
      WHERE pf.org_id = $1 AND pf.location_id = ANY(${param(f.locationIds, '::bigint[]')}))`);
  }
  if (f.locationKeys) {
    where.push(`a.id IN (SELECT pf.asset_id FROM asset_positions pf
      WHERE pf.org_id = $1 AND pf.location_id IN (SELECT lk.id FROM locations lk
        WHERE lk.org_id = $1 AND lk.deleted_at IS NULL AND ${EFFECTIVE('lk')}
          AND lk.external_key = ANY(${param(f.locationKeys, '::text[]')})))`);
  }
  if (f.searchPattern !== undefined) where.push(`a.search_text LIKE ${param(f.searchPattern)}`);
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

export async function listAssets(
  tx: Tx,
  orgId: number,
  filter: AssetListFilter,
): Promise<{ assets: Asset[]; total: number }> {
  const sql = buildAssetListSql(orgId, filter);
  const search = filter.searchPattern !== undefined;
  // A text search's best plan depends on the pattern: it is planned for each request.
  const send = (q: SqlQuery) => (search ? q : preparedFrom(q));
  const { rows } = await tx.query<AssetRow>({ ...send(sql.page), types: WIRE_INSTANTS });
  // The count (when the page does not tell the total), the tags and the locations each
  // depend on the page alone: they leave in one write (the pool pipelines).
  const known = totalFromPage(rows.length, filter);
  const ids = rows.map((r) => r.id);
  const [total, tags, positions] = await allInOneWrite(tx, () => [
    known ?? tx.query<{ total: number }>(send(sql.count)).then((r) => r.rows[0]!.total),
    tagsForOwners(tx, orgId, 'asset', ids),
    search ? positionsOf(tx, orgId, ids) : undefined,
  ]);
  const assets = rows.map((r) =>
    toAsset(positions ? { ...r, ...positions.get(r.id) } : r, tags.get(r.id) ?? []),
  );
  return { assets, total };
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
