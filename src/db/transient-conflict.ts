import { errorCode } from './error-code.js';

/**
 * A transaction PostgreSQL aborted to break a deadlock (40P01) or a serialization failure
 * (40001): nothing it did stands, and the same work run again in a new transaction will
 * normally succeed, the other party having finished meanwhile. Write transactions are
 * run again (src/db/transaction.ts) a few times before the error reaches the caller, which
 * then answers 503 with Retry-After: the request was not wrong, the moment was.
 *
 * Lock orders (keyspace, tree, rows: src/master-data/auto-key.ts, src/locations/service.ts)
 * keep the service's own transactions from deadlocking each other; what is left are races
 * the order cannot see in advance, such as a row renamed into the auto-key form between a
 * delete's read and its update, and transactions of other clients of the database.
 */
const TRANSIENT_SQLSTATES = new Set(['40P01', '40001']);

/** Attempts in all, the first included. */
export const TRANSIENT_CONFLICT_ATTEMPTS = 4;

export function isTransientConflict(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && TRANSIENT_SQLSTATES.has(code);
}

/**
 * The pause before attempt `attempt` + 1: a few milliseconds, random, growing with each
 * failure, so the parties of a deadlock do not meet again in step.
 */
export function transientConflictPauseMs(attempt: number, random = Math.random): number {
  return Math.round((2 + random() * 8) * 2 ** (attempt - 1));
}
