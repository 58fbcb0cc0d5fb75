import type { Database } from '../db/pool.js';
import { PeriodicPass } from '../periodic-pass.js';
import type { IngestLogger } from './limiter.js';
import { RAW_ROW_BYTES } from './raw-log-rows.js';
import { rawMaintenance } from './retention.js';

/**
 * Merging the raw log's small rows after the fact (docs/ingest.md, "Small messages share
 * rows"). The clean messages of a reader share a row only when one transaction stores
 * several of them, as under load; a steady stream gets about a message of each reader per
 * transaction, and a row of a few small messages stays under the 2 kB past which
 * PostgreSQL compresses it: 2,000 reads a second in messages of 20 took 100 MiB of raw log
 * per million reads, against about 10 in a backlog. Once a bucket of time has passed, its
 * small clean rows of each reader are rewritten as shared rows, which are compressed whole.
 */
export const COMPACTION = {
  /** The time buckets (aligned on the epoch, so on UTC days): a merged row holds one bucket's messages. */
  bucketMs: 10 * 60_000,
  /** A bucket is merged once it ended this long ago: a message's row commits a little after its receipt. */
  settleMs: 2 * 60_000,
  /** How far back a pass looks: rows that committed late (an outage) are merged by the next passes. */
  lookbackMs: 60 * 60_000,
  /** Rows at least this large are left as they are: they were shared and compressed already. */
  smallRowBytes: 16 * 1024,
  /** The payload bytes after which a merged row is closed (a row may pass it by its last message). */
  rowBytes: RAW_ROW_BYTES,
  intervalMs: 5 * 60_000,
};

export type CompactionPolicy = typeof COMPACTION;

export interface CompactionResult {
  /** Rows merged (deleted). */
  merged: number;
  /** Rows written in their place. */
  written: number;
}

/** The start of the bucket `ms` is in. */
export const bucketStart = (ms: number, bucketMs: number) => Math.floor(ms / bucketMs) * bucketMs;

/** The bucket of a raw log row. */
const BUCKET = "date_bin($4::bigint * interval '1 millisecond', r.received_at, timestamptz 'epoch')";

/** A row that may be merged: of the organization and window, clean, small, on a whole millisecond. */
const CANDIDATE = `r.org_id = $1 AND r.received_at >= $2 AND r.received_at < $3
    AND r.reader_id IS NOT NULL AND r.bad_reads = 0 AND r.unknown_reads = 0 AND r.errors IS NULL
    AND octet_length(r.payload) < $5 AND date_trunc('milliseconds', r.received_at) = r.received_at`;

/**
 * One organization's statement. The rows of a reader, source and bucket that are clean (a
 * reader's, no bad read, no unknown tag, no error), small, and on whole milliseconds (a
 * shared row keeps its messages' receipts in milliseconds) are deleted when there are at
 * least two, and their messages, split out of the deleted rows as the raw_log view splits
 * them, are written back as shared rows in receipt order. Linear in the rows: no join of
 * the deleted rows with the table again.
 */
const MERGE = `
WITH groups AS (
  SELECT r.reader_id, r.source, ${BUCKET} AS bucket
  FROM raw_messages r
  WHERE ${CANDIDATE}
  GROUP BY 1, 2, 3 HAVING count(*) > 1
), gone AS (
  DELETE FROM raw_messages r
  WHERE ${CANDIDATE} AND (r.reader_id, r.source, ${BUCKET}) IN (SELECT * FROM groups)
  RETURNING r.*, ${BUCKET} AS bucket
), messages AS (
  SELECT g.reader_id, g.source, g.bucket, g.received_at AS at, g.payload, g.good_reads AS good,
    g.id, 1::bigint AS message, octet_length(convert_to(g.payload, 'UTF8')) AS bytes
  FROM gone g
  WHERE g.message_bytes IS NULL
  UNION ALL
  -- A shared row's messages, cut out as the raw_log view cuts them (migration 0069).
  SELECT g.reader_id, g.source, g.bucket, g.received_at + m.after_ms * interval '1 millisecond',
    convert_from(substring(b.bytes FROM m.start::int FOR m.len), 'UTF8'), m.good, g.id, m.i, m.len
  FROM gone g
  CROSS JOIN LATERAL (SELECT convert_to(g.payload, 'UTF8') AS bytes OFFSET 0) b
  CROSS JOIN LATERAL (
    SELECT u.len, u.after_ms, u.good, u.i,
      1 + coalesce(sum(u.len) OVER (ORDER BY u.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start
    FROM unnest(g.message_bytes, g.message_received_ms, g.message_good) WITH ORDINALITY AS u(len, after_ms, good, i)
  ) m
  WHERE g.message_bytes IS NOT NULL
), chunked AS (
  SELECT m.*, (sum(m.bytes) OVER (PARTITION BY m.reader_id, m.source, m.bucket
    ORDER BY m.at, m.id, m.message) - 1) / $6 AS chunk
  FROM messages m
), placed AS (
  SELECT k.*, min(k.at) OVER (PARTITION BY k.reader_id, k.source, k.bucket, k.chunk) AS row_at
  FROM chunked k
), written AS (
  INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads,
    unknown_reads, errors, message_bytes, message_received_ms, message_good)
  SELECT p.row_at, $1, p.reader_id, p.source, string_agg(p.payload, '' ORDER BY p.at, p.id, p.message),
    sum(p.good), 0, 0, NULL,
    array_agg(p.bytes ORDER BY p.at, p.id, p.message),
    array_agg((extract(epoch FROM p.at - p.row_at) * 1000)::int ORDER BY p.at, p.id, p.message),
    array_agg(p.good ORDER BY p.at, p.id, p.message)
  FROM placed p
  GROUP BY p.reader_id, p.source, p.bucket, p.chunk, p.row_at
  RETURNING 1
)
SELECT (SELECT count(*) FROM gone)::int AS merged, (SELECT count(*) FROM written)::int AS written`;

/**
 * Merges the small clean rows of each reader in the buckets that ended at least
 * `settleMs` before `now` and within `lookbackMs`, an organization per transaction (those
 * with readers). Rows merged once are large or alone in their bucket, so a pass over
 * buckets already merged finds nothing to do; a row that committed late joins its bucket's
 * merged row at the next pass.
 */
export async function compactRawLog(
  db: Database,
  now = Date.now(),
  policy: CompactionPolicy = COMPACTION,
): Promise<CompactionResult> {
  const to = bucketStart(now - policy.settleMs, policy.bucketMs);
  const from = bucketStart(now - policy.lookbackMs, policy.bucketMs);
  const total = { merged: 0, written: 0 };
  if (to <= from) return total;
  const { rows: orgs } = await db.system((tx) =>
    tx.query<{ org_id: string }>('SELECT DISTINCT org_id::text FROM readers ORDER BY 1'),
  );
  for (const { org_id } of orgs) {
    const { merged, written } = await rawMaintenance(db, async (tx) => {
      const { rows } = await tx.query<CompactionResult>(MERGE, [
        org_id,
        new Date(from),
        new Date(to),
        policy.bucketMs,
        policy.smallRowBytes,
        policy.rowBytes,
      ]);
      return rows[0]!;
    });
    total.merged += merged;
    total.written += written;
  }
  return total;
}

/** Merges the raw log's small rows every `intervalMs` (COMPACTION), the first time at start. */
export class RawCompaction extends PeriodicPass {
  constructor(db: Database, options: { logger: IngestLogger; policy?: CompactionPolicy }) {
    const policy = options.policy ?? COMPACTION;
    super(async (now) => {
      try {
        const { merged, written } = await compactRawLog(db, now, policy);
        if (merged > 0) options.logger.info({ merged, written }, 'raw log rows merged');
      } catch (err) {
        options.logger.error({ err }, 'merging raw log rows failed; the next pass tries again');
      }
    }, policy.intervalMs);
  }
}
