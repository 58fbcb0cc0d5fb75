import pg from 'pg';
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
  pool: pg.Pool;
  /**
   * Runs `fn` in a transaction as the restricted role with the organization set, so the
   * row-level security policies hide every other organization's rows.
   */
  withOrg<T>(orgId: number, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** A transaction without an organization: for operator commands and auth lookups. */
  system<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** One round trip within `timeoutMs`; rejects with DatabaseUnavailableError otherwise. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function connect(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (err) {
    throw isDatabaseUnavailable(err) ? new DatabaseUnavailableError(err) : err;
  }
}

/**
 * Runs `fn` in a transaction opened by `prologue`. The pool is in pipeline mode: the
 * prologue is written and `fn`'s first statements follow it on the wire without waiting for
 * its answer, one round trip less per transaction. Should the prologue fail, the open
 * transaction is aborted, so nothing `fn` sent behind it runs.
 */
async function inTransaction<T>(pool: pg.Pool, prologue: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await connect(pool);
    // Never rejects: the prologue's error, if any, is looked at once `fn` is done.
    const started = client.query(prologue).then(
      () => undefined,
      (err: Error) => err,
    );
    try {
      const result = await fn(client);
      const failed = await started;
      if (failed) throw failed;
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (err) {
      const failedToStart = await started;
      if (failedToStart && isDatabaseUnavailable(failedToStart)) {
        client.release(failedToStart);
        // A pooled connection the server closed (it restarted) before the pool noticed:
        // the transaction never began, so nothing `fn` sent ran; once more on a new connection.
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

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
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
  pool.on('connect', (client) => client.on('error', () => undefined));
  return {
    pool,
    withOrg(orgId, fn) {
      if (!Number.isSafeInteger(orgId) || orgId < 1) throw new Error(`invalid organization id ${orgId}`);
      // One round trip; orgId is a checked integer, so inlining it is safe.
      const prologue = `BEGIN; SET LOCAL ROLE ${APP_ROLE}; SELECT set_config('tagtrail.org_id', '${orgId}', true)`;
      return inTransaction(pool, prologue, fn);
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
    close: () => pool.end(),
  };
}
