import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Caller } from '../caller.js';
import { restrictedConnectionUrl } from './app-connection.js';
import { checkout } from './checkout.js';
import {
  commitThenFlush,
  committing,
  commitUnawaited,
  flushAfterCommit,
  guarded,
  streamOf,
} from './commit.js';
import { type NamedRead, readNamedImplicitly, readOneImplicitly } from './implicit-read.js';
import {
  inlineParameters,
  joiningOpening,
  payOwedCommits,
  payOwedOnConnect,
  takeOwedCommit,
} from './opening.js';
import { shapeNamedQueries } from './shaped-query.js';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js';

// Surrogate ids live in 1..2147483647 and counts fit easily: int8 as number is exact here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Tx = pg.PoolClient;

export const APP_ROLE = 'tagtrail_app';

/**
 * Bounds on waiting for the database, so an outage answers 503 instead of hanging a
 * request (docs/operations.md, "Database outages").
 */
export const DATABASE_TIMEOUTS = {
  /** Getting a connection: a new one to the server, or a free one from a busy pool. */
  connectMs: 5_000,
  /** A statement the server runs longer than this is cancelled by the server. */
  statementMs: 25_000,
  /** No answer at all (server or network gone mid-query): the client gives up. */
  queryMs: 30_000,
};

export interface DatabaseOptions {
  max?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  queryTimeoutMs?: number;
}

export interface Database {
  /**
   * Connections as the login role (the tables' owner): migrations, operator commands,
   * `system` transactions and tests. Row-level security does not apply to them.
   */
  pool: pg.Pool;
  /**
   * Connections that are the restricted role from their start (`-c role=tagtrail_app`), for
   * `withOrg` and `readWithOrg`: a transaction needs no `SET LOCAL ROLE`, and outside one
   * the organization is unset, so the policies show nothing.
   */
  appPool: pg.Pool;
  /**
   * Runs `fn` in a transaction as the restricted role with the organization set, so the
   * row-level security policies hide every other organization's rows. Given a Caller, its
   * actor is set too (`tagtrail.actor`), for the activity log's triggers (migration 0035).
   */
  withOrg<T>(scope: number | Caller, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * `withOrg` for work that only reads: the transaction is READ ONLY (a write in it fails)
   * and its result is returned without waiting for the COMMIT, which has nothing to make
   * durable; the COMMIT leaves in the same socket write as the connection's next statements.
   */
  readWithOrg<T>(orgId: number, fn: (tx: Tx) => Promise<T>, options?: ReadOptions): Promise<T>;
  /**
   * One SELECT for the organization, as the restricted role: `readWithOrg` with a single
   * statement, sent with `set_config` in one simple-query message and no BEGIN or COMMIT
   * (the statements of one message are one implicit transaction, which the setting lasts
   * for). Row-level security applies as in `readWithOrg`. `text` must be one statement that
   * only reads; with parameters that cannot be written as literals it runs through
   * `readWithOrg` instead.
   */
  readOne<R extends pg.QueryResultRow>(
    orgId: number,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /**
   * Named statements (preparedQuery) that only read, for the organization, as one implicit
   * transaction behind one Sync (./implicit-read.ts): `readWithOrg` of the same statements
   * without its BEGIN, SET LOCAL and COMMIT. Their results, in order.
   */
  readNamed(orgId: number, reads: readonly NamedRead[]): Promise<pg.QueryResult[]>;
  /** A transaction without an organization: for operator commands and auth lookups. */
  system<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** One round trip within `timeoutMs`; rejects with DatabaseUnavailableError otherwise. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ReadOptions {
  /**
   * Every statement of the transaction runs its generic plan (`plan_cache_mode`), for
   * transactions of named statements whose LIMIT and OFFSET are parameters: PostgreSQL
   * prices a generic plan of those at a tenth of the table and so plans them on every call
   * otherwise (docs/performance.md, step 30). Not for a statement whose best plan depends
   * on its values (a text search's planned page): unnamed statements take the setting too.
   */
  genericPlans?: boolean;
}

/**
 * A check that rides in the prologue of the first organization transaction started within
 * `withTransactionGuard`: one more statement in the same write, instead of a round trip of
 * its own before the work. Its verdict holds every transaction of the scope: none returns
 * or commits before the check has passed, and a failed check aborts them.
 */
export interface TransactionGuard {
  /** The organization the check's statement reads under (row-level security). */
  readonly orgId: number;
  /**
   * One statement, sent behind the prologue in the same write; named, so that each
   * connection parses and plans it once.
   */
  readonly query: { name: string; text: string; values: unknown[] };
  /** Throws when the rows the statement read mean the work must not stand. */
  verify(rows: unknown[]): void;
}

interface GuardState {
  guard: TransactionGuard;
  /** Set by the transaction that sent the check; rejects with what `verify` threw. */
  verdict?: Promise<void>;
}

const guards = new AsyncLocalStorage<GuardState>();

/**
 * Runs `fn` with `guard` on the organization transactions it starts; once `fn` is done,
 * waits for the verdict (`settle`, when no transaction sent the check, decides instead).
 */
export async function withTransactionGuard<T>(
  guard: TransactionGuard,
  settle: () => Promise<void>,
  fn: () => Promise<T>,
): Promise<T> {
  const state: GuardState = { guard };
  const result = await guards.run(state, fn);
  await (state.verdict ?? settle());
  return result;
}

/**
 * Runs `fn` in a transaction opened by `prologue`. The pool is in pipeline mode: the
 * prologue is written and `fn`'s first statements follow it on the wire without waiting for
 * its answer, one round trip less per transaction. Should the prologue fail, the open
 * transaction is aborted, so nothing `fn` sent behind it runs.
 */
async function inTransaction<T>(
  pool: pg.Pool,
  prologue: string,
  fn: (tx: Tx) => Promise<T>,
  readOnly = false,
  orgId?: number,
): Promise<T> {
  const state = orgId === undefined ? undefined : guards.getStore();
  for (let attempt = 1; ; attempt++) {
    const client = await checkout(pool, !readOnly);
    const opening = takeOwedCommit(client) ? `COMMIT; ${prologue}` : prologue;
    // The opening and the statements `fn` sends before its first await leave in one write:
    // on a loaded machine each socket write (a loopback TCP send) costs more than the query.
    const stream = streamOf(client);
    stream?.cork();
    let guard: TransactionGuard | undefined;
    if (state && !state.verdict && state.guard.orgId === orgId) guard = state.guard;
    // Never rejects: the opening's error, if any, is looked at once `fn` is done.
    let started: Promise<Error | undefined> | undefined;
    let sendOpening: () => void = () => undefined;
    if (guard) {
      const begun = client.query(opening);
      const checked = client.query<Record<string, unknown>>(guard.query);
      // Fails as well when the opening did; the opening's error is the one reported.
      checked.catch(() => undefined);
      const check = guard;
      started = begun.then(
        async () => {
          try {
            check.verify((await checked).rows);
            return undefined;
          } catch (err) {
            return err as Error;
          }
        },
        (err: Error) => err,
      );
      if (state) {
        state.verdict = started.then((err) => {
          if (err) throw err;
        });
        // Looked at by withTransactionGuard; not a rejection nobody handles meanwhile.
        state.verdict.catch(() => undefined);
      }
    } else {
      ({ sendOpening } = joiningOpening(client, opening, (sent, joined) => {
        // Joined with fn's first statement, an error other than a lost connection is that
        // statement's: fn sees it, and handles it or not, as it would have on its own.
        started = sent.then(
          () => undefined,
          (err: Error) => (!joined || isDatabaseUnavailable(err) ? err : undefined),
        );
      }));
    }
    // A transaction of the scope that did not send the check waits for the one that did.
    const verdict = guard ? undefined : state?.verdict;
    if (guard || verdict) guarded.add(client);
    let work: Promise<T>;
    try {
      work = fn(client);
    } catch (err) {
      work = Promise.reject(err);
    } finally {
      // fn sent nothing before its first await: the opening goes on its own.
      sendOpening();
      stream?.uncork();
    }
    try {
      const result = await work;
      const failed = await started;
      if (failed) throw failed;
      await verdict;
      guarded.delete(client);
      const flush = flushAfterCommit.delete(client);
      const sent = committing.get(client);
      committing.delete(client);
      if (readOnly && !sent) {
        commitUnawaited(client);
        return result;
      }
      await (sent ?? (flush ? commitThenFlush(client, false) : client.query('COMMIT')));
      client.release();
      return result;
    } catch (err) {
      guarded.delete(client);
      flushAfterCommit.delete(client);
      committing.delete(client);
      const failedToStart = await started;
      if (failedToStart && isDatabaseUnavailable(failedToStart)) {
        client.release(failedToStart);
        // A pooled connection the server closed (it restarted) before the pool noticed:
        // the transaction never began, so nothing `fn` sent ran; once more on a new connection
        // (which sends the guard's check again: its verdict was not reached).
        if (guard && state) state.verdict = undefined;
        if (attempt === 1) continue;
        throw new DatabaseUnavailableError(failedToStart);
      }
      if (isDatabaseUnavailable(err)) {
        // The connection is gone or stuck: a ROLLBACK would wait on it. Closing it rolls back.
        client.release(err as Error);
        throw new DatabaseUnavailableError(err);
      }
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
      throw failedToStart ?? err;
    }
  }
}

/**
 * Opens a transaction as the restricted role with the organization set (row-level
 * security) and, for a Caller, its actor (`tagtrail.actor`, read by the activity triggers).
 */
const orgOf = (scope: number | Caller): number => (typeof scope === 'number' ? scope : scope.orgId);

function checkOrgId(orgId: number): void {
  if (!Number.isSafeInteger(orgId) || orgId < 1) throw new Error(`invalid organization id ${orgId}`);
}

function orgPrologue(begin: string, scope: number | Caller): string {
  const orgId = orgOf(scope);
  checkOrgId(orgId);
  // One round trip; orgId is a checked integer and the actor an escaped literal. SET LOCAL,
  // a utility statement, costs the server less than `SELECT set_config(...)`, which goes
  // through the planner and the executor and answers with a row (pgbench, the opening alone:
  // 7-19% more transactions per second).
  const actor = typeof scope === 'number' ? '' : `; SET LOCAL tagtrail.actor = ${actorLiteral(scope)}`;
  // No SET LOCAL ROLE: the connection (appPool) is the restricted role since it started.
  return `${begin}; SET LOCAL tagtrail.org_id = '${orgId}'${actor}`;
}

/** ReadOptions.genericPlans, a clause of the prologue (SET LOCAL, as the organization's). */
const GENERIC_PLANS = '; SET LOCAL plan_cache_mode = force_generic_plan';

/** The caller's actor as the SQL literal of its JSON (escapeLiteral copes with quotes and backslashes). */
function actorLiteral(caller: Caller): string {
  const { actor } = caller;
  const json = JSON.stringify({
    type: actor.type,
    id: actor.type === 'cli' ? null : String(actor.id),
    name: actor.name,
  });
  return pg.escapeLiteral(json);
}

function newPool(connectionString: string, options: DatabaseOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DATABASE_TIMEOUTS.connectMs,
    statement_timeout: options.statementTimeoutMs ?? DATABASE_TIMEOUTS.statementMs,
    query_timeout: options.queryTimeoutMs ?? DATABASE_TIMEOUTS.queryMs,
    // Notices a peer that vanished without closing (host down, network cut) on idle connections.
    keepAlive: true,
    // Statements are written without waiting for the previous one's answer (see inTransaction).
    pipeline: true,
  });
  // A client whose connection drops emits 'error' whether it is idle or checked out (its
  // query fails as well); without a listener that event would take the process down.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    shapeNamedQueries(client);
  });
  return pool;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const pool = newPool(url, options);
  // Lazily filled like any pg.Pool: an instance that serves no organization's work opens none.
  const appPool = newPool(restrictedConnectionUrl(url, APP_ROLE), options);
  // Only inTransaction may take a connection with a read's COMMIT still owed (./opening.ts).
  payOwedOnConnect(appPool);
  const readWithOrg = <T>(orgId: number, fn: (tx: Tx) => Promise<T>, options: ReadOptions = {}): Promise<T> =>
    inTransaction(
      appPool,
      `${orgPrologue('BEGIN READ ONLY', orgId)}${options.genericPlans ? GENERIC_PLANS : ''}`,
      fn,
      true,
      orgId,
    );
  return {
    pool,
    appPool,
    withOrg(scope, fn) {
      return inTransaction(appPool, orgPrologue('BEGIN', scope), fn, false, orgOf(scope));
    },
    readWithOrg,
    readOne<R extends pg.QueryResultRow>(orgId: number, text: string, values: unknown[]) {
      const statement = inlineParameters(text, values);
      // A key confirmation in scope (step 9) rides on a transaction's opening: give it one.
      if (statement === undefined || text.trimEnd().endsWith(';') || guards.getStore()) {
        return readWithOrg(orgId, (tx) => tx.query<R>(text, values));
      }
      checkOrgId(orgId);
      return readOneImplicitly<R>(appPool, orgId, statement);
    },
    readNamed(orgId, reads) {
      // The implicit opening sets generic plans; a transaction that goes without it sets them too.
      const usual = (all: readonly NamedRead[]) =>
        readWithOrg(orgId, (tx) => Promise.all(all.map((r) => tx.query(r))), { genericPlans: true });
      // A key confirmation in scope (step 9) rides on a transaction's opening: give it one.
      if (guards.getStore()) return usual(reads);
      checkOrgId(orgId);
      return readNamedImplicitly(appPool, orgId, reads, usual);
    },
    system(fn) {
      return inTransaction(pool, 'BEGIN', fn);
    },
    async ping(timeoutMs = 3_000) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      // Waiting for a pool slot counts too: a pool that cannot serve a ping cannot serve requests.
      const query = pool.query({ text: 'SELECT 1', query_timeout: timeoutMs } as pg.QueryConfig);
      query.catch(() => undefined);
      try {
        await Promise.race([query, timedOut]);
      } catch (err) {
        throw new DatabaseUnavailableError(err);
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => {
      payOwedCommits();
      await Promise.all([pool.end(), appPool.end()]);
    },
  };
}
