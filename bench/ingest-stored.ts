/**
 * What bench:ingest stores outside its measured window and how it measures what was stored:
 * the warm-up (--warmup), the bytes of the raw log and the stays, the stays rows.
 */
import type pg from 'pg';
import type { Database } from '../src/db/pool.js';
import { COMPACTION, compactRawLog } from '../src/ingest/raw-compaction.js';
import { type BenchReaders, waitForStoredReads } from './harness.js';
import { type BenchMessage, startPublishers } from './ingest-publishers.js';

/** Bytes of the raw log (every partition) and of the stays table, indexes and TOAST included. */
export async function sizes(pool: pg.Pool): Promise<{ raw: number; stays: number }> {
  const { rows } = await pool.query<{ raw: string; stays: string }>(
    `SELECT (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
              WHERE inhparent = 'raw_messages'::regclass) AS raw,
            pg_total_relation_size('stays') AS stays`,
  );
  return { raw: Number(rows[0]!.raw), stays: Number(rows[0]!.stays) };
}

/**
 * The raw log's bytes once its rows are merged as the service merges them when their time
 * has passed (src/ingest/raw-compaction.ts): every bucket taken as settled now, then the
 * table rewritten without the merged rows' space, which a running service reuses for the
 * rows that come after.
 */
export async function mergedRawBytes(db: Database, log: (line: string) => void): Promise<number> {
  const start = performance.now();
  const { merged, written } = await compactRawLog(db, Date.now() + COMPACTION.bucketMs + COMPACTION.settleMs);
  log(`raw log: ${merged} rows merged into ${written} in ${Math.round(performance.now() - start)} ms`);
  await db.pool.query('VACUUM FULL raw_messages');
  return (await sizes(db.pool)).raw;
}

export async function staysCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM stays');
  return Number(rows[0]!.n);
}

/**
 * Publishes the warm-up's messages as a backlog from publishers of their own and waits until
 * their `reads` are stored; the measured run's publishers connect after these have gone.
 */
export async function warmUp(options: {
  mqttUrl: string;
  readers: BenchReaders;
  messages: BenchMessage[];
  /** Unacknowledged messages per reader at most (Infinity: all at once). */
  window: number;
  db: Database;
  reads: number;
}): Promise<void> {
  const { mqttUrl, readers, messages, window, db, reads } = options;
  const warm = await startPublishers({ mqttUrl, readers, messages, window, rate: null });
  try {
    const published = warm.publish();
    await waitForStoredReads(db, readers.readerIds, reads);
    await published;
  } finally {
    await warm.end();
  }
}
