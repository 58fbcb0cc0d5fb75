import type pg from 'pg';
import { errorCode } from './error-code.js';

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
 * the order the statements were sent. `query` is an own property of the connection until
 * `restore`, like the opening's (./opening.ts), which is installed over it.
 */
export function noteFailures(client: pg.PoolClient): NotedFailures {
  type Query = (...args: unknown[]) => unknown;
  const holder = client as unknown as { query: Query };
  let first: unknown;
  const note = (err: unknown) => {
    if (errorCode(err) !== IN_FAILED_TRANSACTION) first ??= err;
  };
  const own = Object.getOwnPropertyDescriptor(client, 'query');
  const original = holder.query;
  const noting: Query = (...args) => {
    const result = original.apply(client, args);
    if (result instanceof Promise) result.catch(note);
    return result;
  };
  holder.query = noting;
  return {
    cause: (err) => (errorCode(err) === IN_FAILED_TRANSACTION && first !== undefined ? first : err),
    restore() {
      if (holder.query !== noting) return;
      if (own) Object.defineProperty(client, 'query', own);
      else delete (holder as { query?: Query }).query;
    },
  };
}
