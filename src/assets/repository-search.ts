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
 * SEARCH_MATCH_MAX + 1 rows. The bound keeps that spending small (at a million assets,
 * reading 1,001 matches before falling back added 2.8 ms to a search whose planned page
 * took 6.4 ms) while the searches planning mattered for, a serial or a key fragment with a
 * handful of matches, stay within it.
 *
 * The page carries its current locations and its tags (a JSON array by tag id), so a
 * search within the bound is answered by this one statement: no round trip after it. They
 * join the page's rows only (at most `limit`), and the generic plan stays as cheap as a
 * custom one (docs/performance.md, step 29), so PostgreSQL keeps it.
 */
export const SEARCH_MATCH_MAX = 200;

/**
 * Whether the trigram index can look the LIKE pattern (containsPattern's) up: three ASCII
 * letters or digits in a row. Without, pg_trgm may find no trigram to look up, and the
 * bitmap would be the whole index; such a search keeps the plan made for its pattern.
 */
export function trigramSearchable(pattern: string): boolean {
  return /[a-z0-9]{3}/i.test(pattern);
}

/** Columns of the head, beside the page's (the list's, with the page's tags). */
export interface SearchHead {
  /** Trigram matches read, at most SEARCH_MATCH_MAX + 1. */
  matched: number;
  /** Assets of the whole match that the list's other filters keep (when matched is within bounds). */
  total: number;
}

/**
 * The live tags of a page row `a` (of a statement whose $1 is the organization), as a JSON
 * array by tag id in the column `tags`: what tagsForOwners reads for GET /assets/{id}.
 */
export const PAGE_ROW_TAGS = `LEFT JOIN LATERAL (
  SELECT coalesce(json_agg(json_build_object('id', tg.id, 'tag_type', tg.tag_type, 'value', tg.value) ORDER BY tg.id), '[]') AS tags
  FROM tags tg WHERE tg.org_id = $1 AND tg.asset_id = a.id AND tg.detached_at IS NULL
) g ON a.id IS NOT NULL`;

export function buildSearchPageSql(orgId: number, f: AssetListFilter): SqlQuery {
  const { where, search, values, param } = listPredicate(orgId, f);
  if (!search) throw new Error('buildSearchPageSql needs a search pattern');
  // The page's order, inside (which rows) and outside (the joins after it keep no order).
  const order = orderBy(f.sort);
  const text = `WITH m AS MATERIALIZED (
  SELECT a.* FROM assets_in_org a WHERE a.org_id = $1 AND ${search} LIMIT ${SEARCH_MATCH_MAX + 1}
), f AS MATERIALIZED (
  SELECT a.id, a.external_key, a.name, a.description, a.is_active, a.metadata,
    a.valid_from, a.valid_to, a.created_at, a.updated_at, a.deleted_at
  FROM m a
  WHERE ${where.join('\n    AND ')}
    AND (SELECT count(*) FROM m) <= ${SEARCH_MATCH_MAX}
)
SELECT t.matched, t.total, a.*, ap.location_id, l.external_key AS location_external_key, g.tags
FROM (SELECT (SELECT count(*) FROM m)::int AS matched, (SELECT count(*) FROM f)::int AS total) t
LEFT JOIN LATERAL (
  SELECT * FROM f a ORDER BY ${order} LIMIT ${param(f.limit)} OFFSET ${param(f.offset)}
) a ON true
LEFT JOIN asset_positions ap ON ap.org_id = $1 AND ap.asset_id = a.id
LEFT JOIN locations l ON l.org_id = $1 AND l.id = ap.location_id
${PAGE_ROW_TAGS}
ORDER BY ${order}`;
  return { text, values };
}

/**
 * Patterns whose match reached the bound lately, per organization: their next pages go to
 * the planned statement directly instead of reading SEARCH_MATCH_MAX + 1 rows in vain
 * again (0.9 ms at a million assets for a three-letter pattern with 3,583 matches). A
 * client paging through a broad search repeats its pattern on every page. Only a hint:
 * a pattern remembered as broad that is no longer so costs a plan, never a wrong page;
 * entries expire, and the oldest go first beyond the size.
 */
export class BroadPatterns {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly size = 1000,
    private readonly ttlMs = 10 * 60_000,
    private readonly now = () => Date.now(),
  ) {}

  has(orgId: number, pattern: string): boolean {
    const key = keyOf(orgId, pattern);
    const at = this.seen.get(key);
    if (at === undefined) return false;
    if (this.now() - at > this.ttlMs) {
      this.seen.delete(key);
      return false;
    }
    return true;
  }

  add(orgId: number, pattern: string): void {
    const key = keyOf(orgId, pattern);
    this.seen.delete(key);
    this.seen.set(key, this.now());
    if (this.seen.size > this.size) this.seen.delete(this.seen.keys().next().value as string);
  }
}

/** One organization's pattern: NUL cannot occur in the id's digits, so keys never collide. */
const keyOf = (orgId: number, pattern: string) => `${orgId}\u0000${pattern}`;

export const broadPatterns = new BroadPatterns();
