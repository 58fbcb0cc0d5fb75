import { createHash } from 'node:crypto';
import type { CustomTypesConfig } from 'pg';

/**
 * A statement each connection parses and plans once: node-postgres sends a named statement's
 * Parse only the first time on a connection, and PostgreSQL keeps its plan (custom plans for
 * the first five runs, then the generic one when it is no dearer). Planning was as much of
 * PostgreSQL's time as executing in the API's hot statements (pg_stat_statements: 0.44 ms
 * to plan an asset read that runs in 0.14 ms), because the row-level security policies and
 * the assets table's fourteen indexes all go through the planner on every run.
 *
 * Only for statements whose best plan does not depend on their parameters (lookups by id,
 * inserts, updates by key, and list pages whose generic plan the plan tests hold to index
 * scans): a generic plan, once chosen, is kept, so a statement whose selectivity swings with
 * its values (a LIKE pattern) stays unnamed, and so does any text built with a varying
 * number of values. The name is derived from the text, so the same text is the same
 * statement on every connection and texts built from fragments (a lock clause, a column
 * list) each get their own.
 */
const names = new Map<string, string>();

export function prepared(text: string): { name: string; text: string } {
  let name = names.get(text);
  if (name === undefined) {
    name = `tt_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
    names.set(text, name);
  }
  return { name, text };
}

/** A named statement with its values (and the parsers of its results), as `Tx.query` takes it. */
export interface PreparedQuery {
  name: string;
  text: string;
  values: unknown[];
  types?: CustomTypesConfig;
}

/**
 * A named statement with its values, as `Tx.query` takes it; `types`, the parsers of its
 * results when not node-postgres' own. Built as one literal: on Node 20 an object spread
 * followed by properties of its own (`{ ...prepared(text), values }`) cost 1-3 µs a call,
 * fifty times the literal (`node bench/object-spread.mjs`).
 */
export function preparedQuery(text: string, values: unknown[], types?: CustomTypesConfig): PreparedQuery {
  const { name } = prepared(text);
  return types === undefined ? { name, text, values } : { name, text, values, types };
}

/**
 * A statement built as `{ text, values }` left unnamed (planned for its values on every
 * run), with the parsers of its results when given; built as a literal, as preparedQuery.
 */
export function unnamedQuery(
  query: { text: string; values: unknown[] },
  types?: CustomTypesConfig,
): { text: string; values: unknown[]; types?: CustomTypesConfig } {
  return types === undefined ? query : { text: query.text, values: query.values, types };
}

/** `preparedQuery` of a statement built as `{ text, values }`. */
export function preparedFrom(
  query: { text: string; values: unknown[] },
  types?: CustomTypesConfig,
): PreparedQuery {
  return preparedQuery(query.text, query.values, types);
}
