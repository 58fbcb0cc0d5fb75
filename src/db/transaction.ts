import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { checkout } from './checkout.js';
import {
  commitThenFlush,
  committing,
  commitUnawaited,
  flushAfterCommit,
  guarded,
  streamOf,
} from './commit.js';
import { noteFailures } from './first-failure.js';
import { joiningOpening, takeOwedCommit } from './opening.js';
import { guardScope, type TransactionGuard } from './transaction-guard.js';
import {
  isTransientConflict,
  TRANSIENT_CONFLICT_ATTEMPTS,
  transientConflictPauseMs,
} from './transient-conflict.js';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js';

/** Counts of what the transactions of one Database went through (tagtrail_db_* metrics). */
export interface DatabaseStats {
  /** Write transactions run again after PostgreSQL aborted them to break a deadlock. */
  transientConflictRetries: number;
}

export interface TransactionOptions {
  /** READ ONLY work: its COMMIT is not waited for, and it is never run again. */
  readOnly?: boolean;
  /** The organization of an organization transaction (a TransactionGuard's scope). */
  orgId?: number;
  /** Where its retries are counted. */
  stats?: DatabaseStats;
}

/**
 * Runs `fn` in a transaction opened by `prologue`. The pool is in pipeline mode: the
 * prologue is written and `fn`'s first statements follow it on the wire without waiting for
 * its answer, one round trip less per transaction. Should the prologue fail, the open
 * transaction is aborted, so nothing `fn` sent behind it runs.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  prologue: string,
  fn: (tx: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const { readOnly = false, orgId, stats } = options;
  const state = orgId === undefined ? undefined : guardScope();
  for (let attempt = 1; ; attempt++) {
    const client = await checkout(pool, !readOnly);
    const failures = noteFailures(client);
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
      failures.restore();
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
      failures.restore();
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
      // What aborted the transaction, not a statement pipelined behind it (./first-failure.ts).
      const failure = failedToStart ?? failures.cause(err);
      // Aborted by the server to break a deadlock: nothing of it stands, so the work runs
      // again in a new transaction (./transient-conflict.ts). Reads take no locks to meet in one.
      if (!readOnly && isTransientConflict(failure) && attempt < TRANSIENT_CONFLICT_ATTEMPTS) {
        if (guard && state) state.verdict = undefined;
        if (stats) stats.transientConflictRetries++;
        await sleep(transientConflictPauseMs(attempt));
        continue;
      }
      throw failure;
    }
  }
}
