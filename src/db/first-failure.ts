import type pg from 'pg';
import { errorCode } from './error-code.js';
import { overrideQuery } from './query-override.js';

/** SQLSTATE of a statement sent after another failed in the same transaction. */
const IN_FAILED_TRANSACTION = '25P02';

/** What noteFailures gives back: the failure behind an error, and the connection's own `query`. */
export interface NotedFailures {
  /**
   * `err`, or the statement failure that aborted the transaction when `err` is "current
   * transaction is aborted" (25P02), the answer of every statement pipelined behind it.
   */
  cause(err: unknown): unknown;
  /** Puts the connection's `query` back (once its transaction is done with it). */
  restore(): void;
}

/**
 * Notes the statement failures on a connection, for its transaction (src/db/transaction.ts):
 * which of a failed statement and a 25P02 behind it reaches the caller depends on which
 * answer the work awaited first, and what happened (a deadlock to run again, a failure
 * that would repeat) is the first one's. Any failure but a 25P02 is kept, not simply the
 * first handled: the rejections of pipelined statements do not reach their handlers in
 * the order the statements were sent. The opening's override (./opening.ts) is installed
 * over this one (./query-override.ts).
 */
export function noteFailures(client: pg.PoolClient): NotedFailures {
  let first: unknown;
  const note = (err: unknown) => {
    if (errorCode(err) !== IN_FAILED_TRANSACTION) first ??= err;
  };
  const restore = overrideQuery(client, (original) => (...args) => {
    const result = original(...args);
    if (result instanceof Promise) result.catch(note);
    return result;
  });
  return {
    cause: (err) => (errorCode(err) === IN_FAILED_TRANSACTION && first !== undefined ? first : err),
    restore,
  };
}
