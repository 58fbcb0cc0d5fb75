import pg from 'pg';

// Surrogate ids live in 1..2147483647 and counts fit easily: int8 as number is exact here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Tx = pg.PoolClient;

export const APP_ROLE = 'tagtrail_app';

export interface Database {
  pool: pg.Pool;
  /**
   * Runs `fn` in a transaction as the restricted role with the organization set, so the
   * row-level security policies hide every other organization's rows.
   */
  withOrg<T>(orgId: number, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** A transaction without an organization: for operator commands and auth lookups. */
  system<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

async function inTransaction<T>(pool: pg.Pool, prologue: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(prologue);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export function createDatabase(url: string, options: { max?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 20 });
  // An idle client losing its connection must not take the process down.
  pool.on('error', () => undefined);
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
    close: () => pool.end(),
  };
}
