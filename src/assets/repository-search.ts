import { type AssetListFilter, listPredicate, orderBy, type SqlQuery } from './list-predicate.js';

/**
 * A text search's page as one named statement, planned once per connection. Planned per
 * request (its best plan depends on the pattern) the page spent 0.18 ms planning for 0.06
 * ms of execution, the largest single cost of the mixed load's PostgreSQL time
 * (docs/performance.md). A plain named page is not safe: its generic plan, a trigram bitmap
 * scan and a sort, reads and sorts every match of a common pattern. This one reads at most
 * SEARCH_MATCH_MAX + 1 trigram matches, filters and sorts those, and returns the page with
 * the total of the whole match; when the match is larger, the caller asks the page planned
 * for its pattern instead (a walk of the sort index), as before, having spent the reading of
 * SEARCH_MATCH_MAX + 1 rows. The bound is where planning stops mattering: a pattern with a
 * thousand matches costs more to sort and count than to plan.
 */
export const SEARCH_MATCH_MAX = 1000;

/**
 * Whether the trigram index can look the LIKE pattern (containsPattern's) up: three ASCII
 * letters or digits in a row. Without, pg_trgm may find no trigram to look up, and the
 * bitmap would be the whole index; such a search keeps the plan made for its pattern.
 */
export function trigramSearchable(pattern: string): boolean {
  return /[a-z0-9]{3}/i.test(pattern);
}

/** Columns of the page (as the list's, locations unread) and of the head. */
export interface SearchHead {
  /** Trigram matches read, at most SEARCH_MATCH_MAX + 1. */
  matched: number;
  /** Assets of the whole match that the list's other filters keep (when matched is within bounds). */
  total: number;
}

export function buildSearchPageSql(orgId: number, f: AssetListFilter): SqlQuery {
  const { where, search, values, param } = listPredicate(orgId, f);
  if (!search) throw new Error('buildSearchPageSql needs a search pattern');
  const text = `WITH m AS MATERIALIZED (
  SELECT a.* FROM assets_in_org a WHERE a.org_id = $1 AND ${search} LIMIT ${SEARCH_MATCH_MAX + 1}
), f AS MATERIALIZED (
  SELECT a.id, a.external_key, a.name, a.description, a.is_active, a.metadata,
    NULL::bigint AS location_id, NULL::text AS location_external_key,
    a.valid_from, a.valid_to, a.created_at, a.updated_at, a.deleted_at
  FROM m a
  WHERE ${where.join('\n    AND ')}
    AND (SELECT count(*) FROM m) <= ${SEARCH_MATCH_MAX}
)
SELECT t.matched, t.total, p.*
FROM (SELECT (SELECT count(*) FROM m)::int AS matched, (SELECT count(*) FROM f)::int AS total) t
LEFT JOIN LATERAL (
  SELECT * FROM f a ORDER BY ${orderBy(f.sort)} LIMIT ${param(f.limit)} OFFSET ${param(f.offset)}
) p ON true`;
  return { text, values };
}
