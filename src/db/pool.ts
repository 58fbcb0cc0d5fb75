import pg from 'pg';
import type { Caller } from '../caller.js';
import { restrictedConnectionUrl, withDateSettings } from './app-connection.js';
import { type NamedRead, readNamedImplicitly, readOneImplicitly } from './implicit-read.js';
import { APPLICATION_NAME } from './instance-name.js';
import { inlineParameters, payOwedCommits, payOwedOnConnect } from './opening.js';
import { checkOrgId, GENERIC_PLANS, orgOf, orgPrologue, SNAPSHOT_BEGIN } from './prologue.js';
import { shapeNamedQueries } from './shaped-query.js';
import { type DatabaseStats, inTransaction } from './transaction.js';
import { guardScope } from './transaction-guard.js';
import { DatabaseUnavailableError } from './unavailable.js';

// Surrogate ids live in 1..2147483647 and counts fit easily: int8 as number is exact here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
// A Date parameter is otherwise written in the process's local time (TZ) with its offset in
// whole minutes, which drops the seconds of an offset that had them (local mean time before
// standard time: Asia/Kolkata +05:53:28 in 1850), so such an instant reached the database
// seconds off; in UTC the text names the Date's instant whatever the process's zone.
pg.defaults.parseInputDatesAsUTC = true;

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
  /** What its transactions went through, read by the metrics (docs/metrics.md). */
  readonly stats: Readonly<DatabaseStats>;
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
  /**
   * One snapshot for every statement (REPEATABLE READ), for work that reads a list page by
   * page and must see it unchanged throughout (a spreadsheet export). Ended by the server
   * when left idle for SNAPSHOT_IDLE_MS (./prologue.ts).
   */
  snapshot?: boolean;
}

function newPool(connectionString: string, options: DatabaseOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DATABASE_TIMEOUTS.connectMs,
    statement_timeout: options.statementTimeoutMs ?? DATABASE_TIMEOUTS.statementMs,
    query_timeout: options.queryTimeoutMs ?? DATABASE_TIMEOUTS.queryMs,
    // Which build opened the connection, for the next build's migrations (./older-builds.ts).
    application_name: APPLICATION_NAME,
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

export function createDatabase(databaseUrl: string, options: DatabaseOptions = {}): Database {
  const url = withDateSettings(databaseUrl);
  const pool = newPool(url, options);
  // Lazily filled like any pg.Pool: an instance that serves no organization's work opens none.
  const appPool = newPool(restrictedConnectionUrl(url, APP_ROLE), options);
  const stats: DatabaseStats = { transientConflictRetries: 0 };
  // Only inTransaction may take a connection with a read's COMMIT still owed (./opening.ts).
  payOwedOnConnect(appPool);
  const readWithOrg = <T>(orgId: number, fn: (tx: Tx) => Promise<T>, options: ReadOptions = {}): Promise<T> =>
    inTransaction(
      appPool,
      `${orgPrologue(options.snapshot ? SNAPSHOT_BEGIN : 'BEGIN READ ONLY', orgId)}${options.genericPlans ? GENERIC_PLANS : ''}`,
      fn,
      { readOnly: true, orgId },
    );
  return {
    pool,
    appPool,
    stats,
    withOrg(scope, fn) {
      return inTransaction(appPool, orgPrologue('BEGIN', scope), fn, { orgId: orgOf(scope), stats });
    },
    readWithOrg,
    readOne<R extends pg.QueryResultRow>(orgId: number, text: string, values: unknown[]) {
      const statement = inlineParameters(text, values);
      // A key confirmation in scope (step 9) rides on a transaction's opening: give it one.
      if (statement === undefined || text.trimEnd().endsWith(';') || guardScope()) {
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
      if (guardScope()) return usual(reads);
      checkOrgId(orgId);
      return readNamedImplicitly(appPool, orgId, reads, usual);
    },
    system(fn) {
      return inTransaction(pool, 'BEGIN', fn, { stats });
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
