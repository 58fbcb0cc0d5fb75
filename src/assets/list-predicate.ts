import { containsCondition, EFFECTIVE, type SortKey } from '../master-data/list-query.js';

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
export function orderBy(sort: SortKey[]): string {
  const keys = sort.length > 0 ? sort : [{ field: 'external_key', desc: false }];
  const parts = keys.map((k) => `${SORT_COLUMNS[k.field]} ${k.desc ? 'DESC' : 'ASC'}`);
  parts.push(`a.id ${keys[keys.length - 1]!.desc ? 'DESC' : 'ASC'}`);
  return parts.join(', ');
}

/** The parts of a list's predicate over `assets_in_org a`, and the values they refer to. */
export interface ListPredicate {
  /** Every condition but the text search. */
  where: string[];
  /** The text search's condition, when there is one. */
  search?: string;
  isActive?: string;
  values: unknown[];
  /** Adds a value and returns its placeholder. */
  param(value: unknown, cast?: string): string;
}

export function listPredicate(orgId: number, f: AssetListFilter): ListPredicate {
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
  const search =
    f.searchPattern === undefined ? undefined : containsCondition('a.search_text', f.searchPattern, param);
  return { where, search, isActive, values, param };
}
