import type { Tx } from '../db/pool.js';
import { preparedFrom } from '../db/prepared.js';
import { EFFECTIVE, type SortKey } from '../master-data/list-query.js';
import { ASSET_COLUMNS, type AssetRow, LOCATION_JOIN, withTags } from './repository.js';
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

  const page = `SELECT ${ASSET_COLUMNS}
FROM assets_in_org a ${LOCATION_JOIN}
WHERE ${predicate}
ORDER BY ${orderBy(f.sort)}
LIMIT ${param(f.limit)} OFFSET ${param(f.offset)}`;
  const count = countedTotal(f)
    ? countedTotalSql(isActive)
    : `SELECT count(*)::int AS total FROM assets_in_org a
WHERE ${predicate}`;
  return { page: { text: page, values }, count: { text: count, values: whereValues } };
}

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
  // A text search's best plan depends on the pattern: it is planned for each request.
  const send = (q: SqlQuery) => (filter.searchPattern === undefined ? preparedFrom(q) : q);
  const { rows } = await tx.query<AssetRow>(send(sql.page));
  // A short page is the last one, so it tells the total; only an empty page past the
  // end or a full page needs the count.
  const total =
    rows.length < filter.limit && (rows.length > 0 || filter.offset === 0)
      ? filter.offset + rows.length
      : (await tx.query<{ total: number }>(send(sql.count))).rows[0]!.total;
  return { assets: await withTags(tx, orgId, rows), total };
}
