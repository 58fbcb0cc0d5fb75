import { createRequire } from 'node:module';
import pg from 'pg';
import { overrideQuery, type QueryMethod } from './query-override.js';

/**
 * node-postgres's own conversion of a parameter to the text it sends (numbers, booleans,
 * dates, arrays, JSON objects), so an inlined literal carries exactly what the parameter did.
 */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue(value: unknown): unknown;
};

/**
 * `text` with its `$n` parameters replaced by quoted literals of `values`, or undefined
 * when that cannot be done exactly (then the statement is sent with its parameters).
 *
 * A parameter goes out as text of no declared type and the server infers the type from
 * where it stands; a quoted literal ('5', 'abc') is of unknown type too and is resolved
 * from its context in the same way, so the statement means the same. Values are escaped by
 * node-postgres's escapeLiteral (the server runs with standard_conforming_strings on, the
 * default since 9.1; escapeLiteral writes E'' when a backslash is present either way).
 * `$n` inside quoted literals, quoted identifiers and comments is left alone; a statement
 * with a dollar-quoted string or an E'' literal, a value that is binary (a Buffer) or
 * holds a NUL, or a reference to a parameter that was not given, is not inlined.
 */
export function inlineParameters(text: string, values: readonly unknown[]): string | undefined {
  const literals: string[] = [];
  for (const value of values) {
    const prepared = prepareValue(value);
    if (prepared === null || prepared === undefined) literals.push('NULL');
    // PostgreSQL reads a NUL in a message's text as the end of it and drops the connection
    // (08P01), which reads as an outage; sent as a parameter it is the usual 22021 instead.
    else if (typeof prepared === 'string' && !prepared.includes('\u0000'))
      literals.push(pg.escapeLiteral(prepared));
    else return undefined;
  }
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      if (c === "'" && /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '')) return undefined;
      const end = text.indexOf(c, i + 1);
      if (end < 0) return undefined;
      // A doubled quote inside continues the same literal: the loop meets it again.
      i = end + 1;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0 || text.slice(i + 2, end).includes('/*')) return undefined;
      i = end + 2;
    } else if (c === '$') {
      const match = /^\$(\d+)/.exec(text.slice(i, i + 12));
      // A dollar in an identifier (a$1) is part of it; `$tag$` and `$$` quote strings.
      if (!match || /[\w$]/.test(text[i - 1] ?? '')) {
        if (!/[\w$]/.test(text[i - 1] ?? '')) return undefined;
        i++;
        continue;
      }
      const literal = literals[Number(match[1]) - 1];
      if (literal === undefined) return undefined;
      out += `${text.slice(from, i)}${literal}`;
      i += match[0].length;
      from = i;
    } else {
      i++;
    }
  }
  return out + text.slice(from);
}

/**
 * Read transactions whose COMMIT is owed: their connection went back to the pool with the
 * READ ONLY transaction still open, and whoever takes it next sends the COMMIT first: a
 * transaction as the first statement of its own opening (`COMMIT; BEGIN ...`, one message,
 * one answer), anyone else (`appPool.query`, `appPool.connect`) as a statement of its own
 * ahead of theirs. What nobody took within COMMIT_HOLD_MS is committed by the sweep.
 * Meanwhile the transaction holds only its tables' ACCESS SHARE locks: a READ COMMITTED
 * transaction keeps no snapshot between statements, so it holds back no vacuum.
 */
const owed = new Map<pg.PoolClient, number>();
let sweep: NodeJS.Timeout | undefined;
/** How long an owed COMMIT waits at least for the connection's next user before the sweep sends it. */
export const COMMIT_HOLD_MS = 10;

const ignore = () => undefined;

/** Commits the owed transactions older than `olderThanMs` (all with 0: a database closing). */
export function payOwedCommits(olderThanMs = 0): void {
  if (sweep) clearTimeout(sweep);
  sweep = undefined;
  const before = performance.now() - olderThanMs;
  for (const [client, since] of owed) {
    // Oldest first (insertion order): the rest are younger still.
    if (since > before) {
      sweep = setTimeout(() => payOwedCommits(COMMIT_HOLD_MS), since - before + 1);
      return;
    }
    owed.delete(client);
    client.query('COMMIT').catch(ignore);
  }
}

/** Call just before releasing a connection whose READ ONLY transaction did its work. */
export function oweCommit(client: pg.PoolClient): void {
  // Re-inserted, so the map stays in the order of the debts.
  owed.delete(client);
  owed.set(client, performance.now());
  sweep ??= setTimeout(() => payOwedCommits(COMMIT_HOLD_MS), COMMIT_HOLD_MS);
}

/** Whether `client` owes a COMMIT, which the caller now sends ahead of its own statements. */
export function takeOwedCommit(client: pg.PoolClient): boolean {
  return owed.delete(client);
}

/**
 * Makes every checkout of `pool` other than through `rawConnect` (which `inTransaction`
 * uses) send an owed COMMIT before anything else: `pool.query` goes through `connect` too.
 */
export function payOwedOnConnect(pool: pg.Pool): void {
  const raw = pg.Pool.prototype.connect as (
    this: pg.Pool,
    callback?: Done,
  ) => Promise<pg.PoolClient> | undefined;
  const pay = (client: pg.PoolClient | undefined) => {
    if (client && owed.delete(client)) client.query('COMMIT').catch(ignore);
  };
  const connect = function (this: pg.Pool, callback?: Done) {
    if (callback) {
      return raw.call(this, (err, client, release) => {
        pay(client);
        callback(err, client, release);
      });
    }
    return raw.call(this)?.then((client) => {
      pay(client);
      return client;
    });
  };
  pool.connect = connect as typeof pool.connect;
}

type Done = (err: Error | undefined, client: pg.PoolClient | undefined, release: unknown) => void;

/** A connection from `pool` without paying its owed COMMIT: the caller takes it (`takeOwedCommit`). */
export function rawConnect(pool: pg.Pool): Promise<pg.PoolClient> {
  return (pg.Pool.prototype.connect as (this: pg.Pool) => Promise<pg.PoolClient>).call(pool);
}

/** The text of a first statement that can join the opening, and its `types`, or undefined. */
function joinable(
  config: unknown,
  values: unknown,
  callback: unknown,
): { text: string; types?: unknown } | undefined {
  if (callback !== undefined) return undefined;
  let text: unknown = config;
  let params: unknown = values;
  let types: unknown;
  if (typeof config !== 'string') {
    if (values !== undefined || typeof config !== 'object' || config === null) return undefined;
    if (Object.getPrototypeOf(config) !== Object.prototype) return undefined;
    if (!Object.keys(config).every((key) => key === 'text' || key === 'values' || key === 'types')) {
      return undefined;
    }
    ({ text, values: params, types } = config as { text?: unknown; values?: unknown; types?: unknown });
  }
  // With no parameters node-postgres sends the text as is, which may be several statements.
  if (typeof text !== 'string' || !Array.isArray(params) || params.length === 0) return undefined;
  if (text.trimEnd().endsWith(';')) return undefined;
  const inlined = inlineParameters(text, params);
  if (inlined === undefined) return undefined;
  // The opening's own results (BEGIN, SET) are of types `types` reads as usual.
  return types === undefined ? { text: inlined } : { text: inlined, types };
}

/**
 * Until the opening is sent, the connection's `query` is replaced (./query-override.ts):
 * the first statement `fn` sends, when its parameters can be written as literals
 * (`inlineParameters`), goes out in the same message as the opening (`BEGIN ...; SET LOCAL
 * ...; <statement>`), so the server answers both at once: one message and one answer fewer
 * per transaction. Otherwise the opening is sent on its own first. `open` is called with
 * the promise of what was sent: the opening's results, or the opening's and the
 * statement's. Call `sendOpening` once `fn`'s synchronous part is done: it sends the
 * opening if nothing did, and puts `query` back.
 */
export function joiningOpening(
  client: pg.PoolClient,
  opening: string,
  open: (sent: Promise<unknown>, joined: boolean) => void,
): { sendOpening(): void } {
  let send: QueryMethod = () => undefined;
  let sent = false;
  const putBack = overrideQuery(client, (original) => {
    send = original;
    return (config: unknown, values?: unknown, callback?: unknown) => {
      const statement = joinable(config, values, callback);
      if (statement === undefined) {
        sendOpening();
        return send(config, values, callback);
      }
      restore();
      const text = `${opening}; ${statement.text}`;
      const both = send(statement.types ? { text, types: statement.types } : text) as Promise<
        pg.QueryResult[]
      >;
      open(both, true);
      return both.then((results) => results[results.length - 1]);
    };
  });
  const restore = () => {
    sent = true;
    putBack();
  };
  const sendOpening = () => {
    if (sent) return;
    restore();
    open(send(opening) as Promise<unknown>, false);
  };
  return { sendOpening };
}
