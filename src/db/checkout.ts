import type pg from 'pg';
import { rawConnect } from './opening.js';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js';
import { connectInTurn } from './write-first.js';

/**
 * A connection for a transaction or a read; a write's is served ahead of waiting reads
 * (./write-first.ts). An owed COMMIT (./opening.ts) is left to the caller to send.
 */
export async function checkout(pool: pg.Pool, write: boolean): Promise<pg.PoolClient> {
  try {
    return await connectInTurn(pool, () => rawConnect(pool), write);
  } catch (err) {
    throw isDatabaseUnavailable(err) ? new DatabaseUnavailableError(err) : err;
  }
}
