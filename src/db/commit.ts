/**
 * How transactions end (see inTransaction, src/db/transaction.ts): the READ ONLY commit that is not
 * waited for, the COMMIT that releases its locks before the WAL flush and the one sent
 * behind a transaction's last statements.
 */
import type pg from 'pg';
import { oweCommit } from './opening.js';
import type { Tx } from './pool.js';

/** The socket under a pooled client (node-postgres keeps it on its connection). */
export function streamOf(client: pg.PoolClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } })
    .connection?.stream;
  return stream?.cork && stream.uncork ? (stream as { cork(): void; uncork(): void }) : undefined;
}

/**
 * Ends a READ ONLY transaction and returns its connection to the pool without sending its
 * COMMIT, which has nothing to make durable: the connection's next user sends it ahead of
 * its own statements, in the same message as its opening when it is a transaction
 * (./opening.ts: `oweCommit`), else the sweep 10-20 ms later.
 */
export function commitUnawaited(client: pg.PoolClient): void {
  oweCommit(client);
  client.release();
}

/** Transactions whose COMMIT releases their locks before the WAL flush; see releaseBeforeFlush. */
export const flushAfterCommit = new WeakSet<pg.PoolClient>();

/**
 * Makes the transaction's COMMIT release its locks without waiting for its WAL flush, and
 * the transaction's end (withOrg returning) wait for that flush instead: for work that holds
 * a lock the organization's other writes queue on (the keyspace lock), so that they no
 * longer take turns through one fsync each. Returns the SQL expression to put in the select
 * list of a statement the transaction runs anyway (it sets `synchronous_commit` off for the
 * transaction), so it costs no round trip of its own.
 *
 * The promise kept: nothing acknowledged is lost, as `withOrg` returns only once the commit
 * is as durable as a synchronous one (see commitThenFlush). What is given up: between the
 * commit and its flush (a few ms), other transactions see the rows, which a crash in that
 * window loses (docs/performance.md, step 10).
 */
export function releaseBeforeFlush(tx: Tx): string {
  flushAfterCommit.add(tx);
  return "set_config('synchronous_commit', 'off', true)";
}

/**
 * Makes the transaction durable in a second one that commits synchronously: it takes an
 * xid and writes a WAL record (a transactional logical message, which nothing reads unless
 * a logical decoding client asks for messages), so its COMMIT waits until the WAL is
 * flushed, and replicated to a synchronous standby if there is one, past its own commit
 * record, hence past the one before it. Concurrent flushes are shared (PostgreSQL's group
 * commit). Taking an xid alone (`pg_current_xact_id()`) is not enough: a transaction that
 * wrote no WAL before its commit record commits without waiting for the flush
 * (RecordTransactionCommit), which test/master-data/keyspace-flush.test.ts showed.
 * PostgreSQL 14-16 has no function that waits for a flush without writing
 * (pg_current_wal_flush_lsn only reports it; pg_logical_emit_message's `flush` argument
 * came in 17). Both leave in one write, so it adds no round trip.
 */
export async function commitThenFlush(client: pg.PoolClient, checked: boolean): Promise<void> {
  const stream = streamOf(client);
  stream?.cork();
  const committed = checked ? commit(client) : client.query('COMMIT');
  // Runs whatever the COMMIT's outcome; on its own it writes one WAL record and commits.
  const flushed = client.query(FLUSH);
  flushed.catch(() => undefined);
  stream?.uncork();
  await committed;
  await flushed;
}

const FLUSH = "SELECT pg_logical_emit_message(true, 'tagtrail.flush', '')";

/** COMMIT, failing when it rolled back instead (a statement sent before it had failed). */
export async function commit(client: pg.PoolClient): Promise<void> {
  const result = await client.query('COMMIT');
  if (result.command === 'ROLLBACK') throw new Error('the transaction was rolled back at COMMIT');
}

/** COMMITs already sent by commitBehind, which the transaction's end waits for. */
export const committing = new WeakMap<pg.PoolClient, Promise<void>>();
/** Transactions whose COMMIT must wait for a TransactionGuard's verdict. */
export const guarded = new WeakSet<pg.PoolClient>();

/**
 * Sends the transaction's COMMIT now, behind the statements already sent and without
 * waiting for their answers, so that the locks they take are held for the server's work
 * alone, not for a round trip to this process; `withOrg` returns once it is done (and
 * flushed, after releaseBeforeFlush). Should a statement before it fail, the COMMIT rolls
 * back. Send nothing after it. With a TransactionGuard's check pending it does nothing: the
 * COMMIT then waits for the verdict, as usual.
 */
export function commitBehind(tx: Tx): void {
  if (guarded.has(tx) || committing.has(tx)) return;
  const done = flushAfterCommit.delete(tx) ? commitThenFlush(tx, true) : commit(tx);
  done.catch(() => undefined);
  committing.set(tx, done);
}

/**
 * inOneWrite for statements sent together: waits for every answer before throwing the first
 * error (in the order sent), so none is still running once the transaction ends.
 */
export async function allInOneWrite<T extends readonly unknown[]>(
  tx: Tx,
  send: () => T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(inOneWrite(tx, send));
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/** Runs `send` with the connection's socket corked, so what it sends leaves in one write. */
export function inOneWrite<T>(tx: Tx, send: () => T): T {
  const stream = streamOf(tx);
  stream?.cork();
  try {
    return send();
  } finally {
    stream?.uncork();
  }
}
