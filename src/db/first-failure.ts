import type { Tx } from './pool.js';

/** SQLSTATE of a statement sent after another failed in the same transaction. */
const IN_FAILED_TRANSACTION = '25P02';

/**
 * Runs `work` with a transaction, noting the statement failures on it, and returns a
 * `cause` that turns "current transaction is aborted" (25P02), the answer of every
 * statement pipelined behind a failed one, into the failure that aborted the transaction.
 * Which of the two reaches the caller depends on which statement's answer the work
 * awaited first; what happened, and whether it would happen again, is the other one's.
 */
export function noteFirstFailure<T>(
  tx: Tx,
  work: (tx: Tx) => Promise<T>,
): { done: Promise<T>; cause: (err: unknown) => unknown } {
  let first: unknown;
  // Any but a 25P02, not simply the first: the rejections of pipelined statements do not
  // reach their handlers in the order the statements were sent (a 25P02 came first).
  const note = (err: unknown) => {
    if ((err as { code?: unknown } | null)?.code !== IN_FAILED_TRANSACTION) first ??= err;
  };
  const query = tx.query;
  const own = Object.hasOwn(tx, 'query');
  const noting = function (this: Tx, ...args: unknown[]) {
    const result = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) result.catch(note);
    return result;
  };
  tx.query = noting as Tx['query'];
  let done: Promise<T>;
  try {
    done = work(tx);
  } catch (err) {
    done = Promise.reject(err);
  }
  // The pooled client goes back with its own method once the work is done.
  const restore = () => {
    if (tx.query !== noting) return;
    if (own) tx.query = query;
    else delete (tx as Partial<Pick<Tx, 'query'>>).query;
  };
  done.then(restore, restore);
  return {
    done,
    cause: (err) =>
      (err as { code?: unknown } | null)?.code === IN_FAILED_TRANSACTION && first !== undefined ? first : err,
  };
}
