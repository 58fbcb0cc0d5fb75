import { releaseBeforeFlush } from './commit.js';
import type { Tx } from './pool.js';
import { preparedQuery } from './prepared.js';
import { textPer } from './statement-text.js';

/** How long a transaction lock is held: see takeXactLock. */
export interface LockOptions {
  /**
   * Hold the lock until the COMMIT's WAL flush, as any lock is by default. Imports do: they
   * hold it for their whole run, which one fsync more or less does not change, and so rows
   * that a crash could still lose are visible only for single-row writes.
   */
  heldThroughFlush?: boolean;
}

const LOCK = 'SELECT pg_advisory_xact_lock($1, $2)';
const LOCK_UNTIL_COMMIT = textPer((release: string) => `${LOCK}, ${release}`);

/**
 * Takes the transaction-scoped advisory lock (`lockClass`, `key`). The COMMIT releases it
 * before its WAL flush, which the transaction's end waits for instead (releaseBeforeFlush,
 * ./commit.ts), unless `heldThroughFlush`: writers queue on the lock for each other's work,
 * not for one fsync each.
 */
export async function takeXactLock(
  tx: Tx,
  lockClass: number,
  key: number,
  options: LockOptions = {},
): Promise<void> {
  const text = options.heldThroughFlush ? LOCK : LOCK_UNTIL_COMMIT(releaseBeforeFlush(tx));
  await tx.query(preparedQuery(text, [lockClass, key]));
}
