import type { Database, Tx } from '../db/pool.js';
import { PeriodicPass } from '../periodic-pass.js';
import { DEFAULT_CLOCK_POLICY, digestWindowMs } from './clock-policy.js';
import type { IngestLogger } from './limiter.js';
import { deleteExpiredDigests } from './message-digests.js';

const DAY_MS = 24 * 3600_000;
/** Daily partitions as ensure_raw_partition (migration 0005) names them. */
const PARTITION_NAME = /^raw_messages_(\d{4})(\d{2})(\d{2})$/;
/** Serialises partition maintenance between instances sharing a database. */
const LOCK_KEY = 'tagtrail:raw_messages:retention';

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Start of the UTC day a partition name stands for, or null for any other name. */
export function partitionDay(name: string): number | null {
  const m = PARTITION_NAME.exec(name);
  if (!m) return null;
  const day = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return utcDay(day) === `${m[1]}-${m[2]}-${m[3]}` ? day : null;
}

/** A system transaction holding the raw log's maintenance lock, in UTC. */
export async function rawMaintenance<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.system(async (tx) => {
    // Partition bounds are computed from `day::timestamptz`: days are UTC days.
    await tx.query("SET LOCAL TimeZone = 'UTC'");
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [LOCK_KEY]);
    return fn(tx);
  });
}

/**
 * Makes sure the daily partitions of the raw log exist from the day of `now` to
 * `daysAhead` days later (UTC). Rows that already landed in the default partition for such
 * a day (the service was not running to prepare it) are moved into the new partition,
 * which PostgreSQL requires before it creates it. Returns the partitions created.
 */
export async function ensureRawPartitions(db: Database, now = Date.now(), daysAhead = 2): Promise<string[]> {
  const created: string[] = [];
  for (let d = 0; d <= daysAhead; d++) {
    const day = utcDay(now + d * DAY_MS);
    const name = `raw_messages_${day.replaceAll('-', '')}`;
    const made = await rawMaintenance(db, async (tx) => {
      const exists = await tx.query('SELECT to_regclass($1) IS NOT NULL AS present', [name]);
      if (exists.rows[0]?.present) return false;
      const from = `${day}T00:00:00Z`;
      const to = new Date(Date.parse(from) + DAY_MS).toISOString();
      await tx.query('LOCK TABLE raw_messages_default IN SHARE ROW EXCLUSIVE MODE');
      const stray = await tx.query(
        'SELECT 1 FROM raw_messages_default WHERE received_at >= $1 AND received_at < $2 LIMIT 1',
        [from, to],
      );
      if (stray.rowCount) {
        await tx.query('CREATE TEMP TABLE raw_move (LIKE raw_messages) ON COMMIT DROP');
        await tx.query(
          `WITH moved AS (DELETE FROM raw_messages_default WHERE received_at >= $1 AND received_at < $2 RETURNING *)
           INSERT INTO raw_move SELECT * FROM moved`,
          [from, to],
        );
      }
      await tx.query('SELECT ensure_raw_partition($1::date)', [day]);
      if (stray.rowCount) {
        await tx.query('INSERT INTO raw_messages OVERRIDING SYSTEM VALUE SELECT * FROM raw_move');
      }
      return true;
    });
    if (made) created.push(name);
  }
  return created;
}

export interface DropResult {
  /** Partitions dropped whole. */
  dropped: string[];
  /** Expired rows deleted from the default partition. */
  deletedRows: number;
}

/**
 * Drops the daily partitions that hold only rows older than `retentionDays` (a partition
 * goes once its whole day is past the cutoff) and deletes such rows from the default one.
 */
export async function dropExpiredRaw(
  db: Database,
  retentionDays: number,
  now = Date.now(),
): Promise<DropResult> {
  const cutoff = now - retentionDays * DAY_MS;
  return rawMaintenance(db, async (tx) => {
    const { rows } = await tx.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       WHERE p.oid = 'raw_messages'::regclass ORDER BY c.relname`,
    );
    const dropped: string[] = [];
    for (const { name } of rows) {
      const day = partitionDay(name);
      if (day === null || day + DAY_MS > cutoff) continue;
      await tx.query(`DROP TABLE ${name}`); // the name matched PARTITION_NAME: digits only
      dropped.push(name);
    }
    const deleted = await tx.query('DELETE FROM raw_messages_default WHERE received_at < $1', [
      new Date(cutoff),
    ]);
    return { dropped, deletedRows: deleted.rowCount ?? 0 };
  });
}

/**
 * Deletes the message digests (redelivery detection, src/ingest/message-digests.ts) first
 * seen more than `windowMs` ago, in batches. Not under the partitions' lock: plain DELETEs
 * that two instances may run at once.
 */
export async function dropExpiredDigests(
  db: Database,
  windowMs: number,
  now = Date.now(),
  batch = 50_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.system((tx) => deleteExpiredDigests(tx, now - windowMs, batch));
    total += deleted;
    if (deleted < batch) return total;
  }
}

/**
 * Keeps the raw log's partitions: today's and the next two days' exist ahead of the
 * messages, and whatever is older than the retention is dropped, at start and hourly;
 * message digests older than their window go at the same times.
 */
export class RawRetention extends PeriodicPass {
  constructor(
    db: Database,
    options: {
      retentionDays: number;
      logger: IngestLogger;
      intervalMs?: number;
      /** How long message digests are kept; by default the window of the default clock policy. */
      digestWindowMs?: number;
    },
  ) {
    // One pass: create ahead, then drop expired. Each step's failure is logged; the next pass retries.
    super(async (now) => {
      const { logger, retentionDays } = options;
      try {
        const created = await ensureRawPartitions(db, now);
        if (created.length > 0) logger.info({ partitions: created }, 'raw log partitions created');
      } catch (err) {
        logger.error({ err }, 'creating raw log partitions failed; messages go to the default partition');
      }
      try {
        const { dropped, deletedRows } = await dropExpiredRaw(db, retentionDays, now);
        if (dropped.length > 0 || deletedRows > 0) {
          logger.info({ dropped, deletedRows, retentionDays }, 'expired raw messages removed');
        }
      } catch (err) {
        logger.error({ err }, 'removing expired raw messages failed');
      }
      try {
        const window = options.digestWindowMs ?? digestWindowMs(DEFAULT_CLOCK_POLICY);
        const deleted = await dropExpiredDigests(db, window, now);
        if (deleted > 0) logger.info({ deleted }, 'expired message digests removed');
      } catch (err) {
        logger.error({ err }, 'removing expired message digests failed');
      }
    }, options.intervalMs ?? 3600_000);
  }
}
