import type { Database, Tx } from '../db/pool.js';
import { type FieldError, fieldError, validationError } from '../errors.js';

export interface SortKey {
  field: string;
  desc: boolean;
}

/**
 * `sort=name,-created_at`: comma-separated fields, each optionally prefixed `-`.
 * An unknown field is `invalid_value` with the message the spec gives.
 */
export function parseSort(raw: string | undefined, allowed: readonly string[]): SortKey[] {
  if (raw === undefined || raw === '') return [];
  const keys: SortKey[] = [];
  for (const part of raw.split(',')) {
    const desc = part.startsWith('-');
    const field = desc ? part.slice(1) : part;
    if (!allowed.includes(field)) {
      throw fieldError('sort', 'invalid_value', `unknown sort field: ${field}`, { allowed_values: allowed });
    }
    if (!keys.some((k) => k.field === field)) keys.push({ field, desc });
  }
  return keys;
}

/**
 * `%q%` for LIKE over the lowercased search text, with LIKE's wildcards escaped. Only ASCII
 * letters are lower-cased here; containsCondition has PostgreSQL lower-case the rest, as it
 * lower-cased the stored text: Node's ICU knows newer Unicode than the database's may (`Ɤ`,
 * U+A7CB, has a lower case in Unicode 16), and `q` lowered by one and the text by the
 * other would then miss text that is literally there.
 */
export function containsPattern(q: string): string {
  return `%${q.replace(/[A-Z]+/g, (c) => c.toLowerCase()).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The Greek sigma: capital, and the two lower-case forms (word-final `ς`, `σ` elsewhere). */
const SIGMA = /[Σσς]/;
const SIGMAS = /[Σσς]/g;
/** Anything beyond ASCII (a pattern without any is compared as it is). */
const NON_ASCII = /[^\p{ASCII}]/u;

/** The collation of a searched text: a column's ("default"), or an expression's own ("und-x-icu"). */
export type TextCollation = 'default' | 'und-x-icu';

/**
 * A pattern parameter lower-cased by the database as the searched text was, in that text's
 * collation: a trigram index applies only to a LIKE in its expression's collation.
 */
const lowered = (placeholder: string, collation: TextCollation) =>
  `(lower(${placeholder} COLLATE "und-x-icu") COLLATE "${collation}")`;

/**
 * `text LIKE pattern` for a text lower-cased by PostgreSQL (ICU) and a containsPattern:
 * case-insensitive containment. An ASCII pattern is compared as it is (and keeps its
 * statement); any other is lower-cased by PostgreSQL. Lower-casing maps a capital sigma
 * by its place in the word (`ς` at a word's end, `σ` elsewhere), so the stored text and
 * `q`, each lower-cased in its own context, can disagree where `q` starts or ends (`Σ` in
 * `ΟΔΟΣ`, `ΟΣ` in `ΟΣΑ`). Where the pattern holds a sigma, each one is a wildcard for the
 * trigram index's sake, and the match is decided on both sides with every sigma as `σ`.
 * `param` adds a value and returns its placeholder; `collation` is the text's.
 */
export function containsCondition(
  text: string,
  pattern: string,
  param: (value: string) => string,
  collation: TextCollation = 'default',
): string {
  if (!NON_ASCII.test(pattern)) return `${text} LIKE ${param(pattern)}`;
  if (!SIGMA.test(pattern)) return `${text} LIKE ${lowered(param(pattern), collation)}`;
  const wildcards = pattern.replace(SIGMAS, '_');
  return `${text} LIKE ${lowered(param(wildcards), collation)} AND translate(${text}, 'ς', 'σ') LIKE translate(${lowered(param(pattern), collation)}, 'ς', 'σ')`;
}

/** The id form and key form of one relationship are exclusive in a query (rule 2). */
export function exclusivePair(query: object, idName: string, keyName: string): void {
  const q = query as Record<string, unknown>;
  if (q[idName] === undefined || q[keyName] === undefined) return;
  const fields: FieldError[] = [idName, keyName].map((name) => ({
    field: name,
    code: 'ambiguous_fields',
    message: `${name}: ${idName} and ${keyName} are mutually exclusive; send one or the other`,
    params: { exclusive_with: name === idName ? keyName : idName },
  }));
  throw validationError(fields);
}

/**
 * The total a page tells by itself: a short page is the last one; only a full page, or an
 * empty one past the end, needs the count (undefined).
 */
export function totalFromPage(rowCount: number, page: { limit: number; offset: number }): number | undefined {
  return rowCount < page.limit && (rowCount > 0 || page.offset === 0) ? page.offset + rowCount : undefined;
}

/** The list envelope (API-SPEC "List envelope"). */
export function listEnvelope<T>(data: T[], page: { limit: number; offset: number }, total: number) {
  return { data, limit: page.limit, offset: page.offset, total_count: total };
}

/** The page a list route's PageQuery asks for. */
export const pageOf = (query: { limit: number; offset: number }) => ({
  limit: query.limit,
  offset: query.offset,
});

/**
 * The page of a list an organization keeps only a handful of (readers, webhook endpoints):
 * its service returns them all, so the page is a slice and the total is the length.
 */
export function slicePage<T>(all: T[], page: { limit: number; offset: number }) {
  return { rows: all.slice(page.offset, page.offset + page.limit), total: all.length };
}

/** SQL predicate: the row is currently effective (API-SPEC "Liveness axes"). */
export const EFFECTIVE = (alias: string) =>
  `${alias}.valid_from <= now() AND (${alias}.valid_to IS NULL OR ${alias}.valid_to > now())`;

/**
 * Hands every page of a list to `onPage` in order, `pageSize` rows each, reading them with
 * `page(tx, offset)` until one comes back short, all in one read transaction of the
 * organization on one snapshot: each page its own transaction let rows shift between pages
 * as others were created or deleted meanwhile, so a row live throughout could be left out
 * or listed twice. `onPage` may wait (for a download to take the page); the transaction
 * waits with it, up to the snapshot's idle bound (src/db/prologue.ts). `genericPlans` as
 * for readWithOrg (ReadOptions).
 */
export function eachPageOnSnapshot<T>(
  db: Database,
  orgId: number,
  options: { pageSize: number; genericPlans: boolean },
  page: (tx: Tx, offset: number) => Promise<T[]>,
  onPage: (rows: T[]) => Promise<void>,
): Promise<void> {
  const { pageSize, genericPlans } = options;
  return db.readWithOrg(
    orgId,
    async (tx) => {
      for (let offset = 0; ; offset += pageSize) {
        const rows = await page(tx, offset);
        await onPage(rows);
        if (rows.length < pageSize) return;
      }
    },
    { genericPlans, snapshot: true },
  );
}
