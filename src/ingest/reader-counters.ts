import { int4Array, int8Array, timestampArray } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';

/** What stored messages add to one reader's row (several of one reader summed). */
export interface ReaderCounts {
  readerId: number;
  /** Receipt time (epoch ms); of several messages, the latest. */
  receivedAt: number;
  /**
   * Receipt time of the latest of them with bad reads; null when none had any. Not
   * receivedAt: a good message received after a bad one in the same batch (messages wait
   * for their commit, behind the limiter and the batch before) would otherwise date the
   * reader's last error at the good one.
   */
  errorAt: number | null;
  good: number;
  bad: number;
  unknown: number;
  /**
   * For the per-minute buckets: the reads and bad reads of the messages received in the
   * minute of receivedAt, and in the minute before it. A batch's messages wait together
   * for their commit, so one may span a minute's end; a message older than those two
   * minutes counts in the totals only, as it would stored alone.
   */
  latestMinute: MinuteCounts;
  minuteBefore: MinuteCounts;
}

/** Reads (good, bad and unknown) and bad reads received in one minute. */
export interface MinuteCounts {
  reads: number;
  bad: number;
}

const MINUTE_MS = 60_000;
const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS);

/** What one message adds to its reader: its counts, all of them in its own minute. */
export function messageCounts(
  readerId: number,
  receivedAt: number,
  o: { good: number; bad: number; unknown: number },
): ReaderCounts {
  return {
    readerId,
    receivedAt,
    errorAt: o.bad > 0 ? receivedAt : null,
    good: o.good,
    bad: o.bad,
    unknown: o.unknown,
    latestMinute: { reads: o.good + o.bad + o.unknown, bad: o.bad },
    minuteBefore: { reads: 0, bad: 0 },
  };
}

/**
 * A batch's outcomes summed per reader, in reader id order (the order its rows are
 * locked in): the latest receipt, and apart from it the latest receipt of a message
 * with bad reads; the reads of the latest receipt's minute and of the minute before apart.
 */
export function countsByReader(
  messages: ReadonlyArray<{ reader: { id: number }; receivedAt: number }>,
  outcomes: ReadonlyArray<{ good: number; bad: number; unknown: number }>,
): ReaderCounts[] {
  const totals = new Map<number, ReaderCounts>();
  messages.forEach((m, i) => {
    const o = outcomes[i]!;
    const errorAt = o.bad > 0 ? m.receivedAt : null;
    const t = totals.get(m.reader.id);
    if (!t) {
      totals.set(m.reader.id, messageCounts(m.reader.id, m.receivedAt, o));
      return;
    }
    addToMinutes(t, m.receivedAt, o);
    t.receivedAt = Math.max(t.receivedAt, m.receivedAt);
    if (errorAt !== null) t.errorAt = Math.max(t.errorAt ?? errorAt, errorAt);
    t.good += o.good;
    t.bad += o.bad;
    t.unknown += o.unknown;
  });
  return [...totals.values()].sort((a, b) => a.readerId - b.readerId);
}

/**
 * Adds a message's reads to the minute buckets of `t`, whose receivedAt is still the
 * latest before this message: a newer minute moves the buckets on, as the row's do.
 */
function addToMinutes(
  t: ReaderCounts,
  receivedAt: number,
  o: { good: number; bad: number; unknown: number },
) {
  const age = minuteOf(t.receivedAt) - minuteOf(receivedAt);
  const reads = o.good + o.bad + o.unknown;
  if (age < 0) {
    t.minuteBefore = age === -1 ? t.latestMinute : { reads: 0, bad: 0 };
    t.latestMinute = { reads, bad: o.bad };
    return;
  }
  const bucket = age === 0 ? t.latestMinute : age === 1 ? t.minuteBefore : undefined;
  if (!bucket) return;
  bucket.reads += reads;
  bucket.bad += o.bad;
}

/**
 * Adds stored messages' reads to their readers' counters, last message time and
 * per-minute buckets (migration 0015), one statement for every reader of a batch (one
 * entry per reader). An entry's latest minute and the minute before are added to the
 * row's buckets where they are its latest or the one before; a newer minute rotates the
 * buckets (the latest becomes the previous one when it is the minute just before, else
 * both start over). Reads of an older minute still count in the totals. Every expression
 * reads the row as it was before this UPDATE, so the CASEs agree with one another. The
 * last error time is the receipt of the latest message with bad reads (greatest ignores a
 * NULL errorAt), never the time the batch is stored. The caller locks the rows (in id
 * order) when batches may race.
 */
export async function bumpReaderCounters(tx: Tx, orgId: number, counts: ReaderCounts[]): Promise<void> {
  if (counts.length === 0) return;
  await tx.query(
    `UPDATE readers r SET
       last_message_at = greatest(r.last_message_at, b.at),
       good_reads = r.good_reads + b.good, bad_reads = r.bad_reads + b.bad,
       unknown_reads = r.unknown_reads + b.unknown,
       last_error_at = greatest(r.last_error_at, b.error_at),
       rate_minute = greatest(r.rate_minute, b.m),
       rate_reads = CASE WHEN r.rate_minute IS NULL OR b.m > r.rate_minute THEN b.n
         WHEN b.m = r.rate_minute THEN r.rate_reads + b.n ELSE r.rate_reads END,
       rate_errors = CASE WHEN r.rate_minute IS NULL OR b.m > r.rate_minute THEN b.e
         WHEN b.m = r.rate_minute THEN r.rate_errors + b.e ELSE r.rate_errors END,
       rate_prev_reads = CASE WHEN b.m = r.rate_minute + interval '1 minute' THEN r.rate_reads + b.pn
         WHEN r.rate_minute IS NULL OR b.m > r.rate_minute THEN b.pn
         WHEN b.m = r.rate_minute THEN r.rate_prev_reads + b.pn
         WHEN b.m = r.rate_minute - interval '1 minute' THEN r.rate_prev_reads + b.n ELSE r.rate_prev_reads END,
       rate_prev_errors = CASE WHEN b.m = r.rate_minute + interval '1 minute' THEN r.rate_errors + b.pe
         WHEN r.rate_minute IS NULL OR b.m > r.rate_minute THEN b.pe
         WHEN b.m = r.rate_minute THEN r.rate_prev_errors + b.pe
         WHEN b.m = r.rate_minute - interval '1 minute' THEN r.rate_prev_errors + b.e ELSE r.rate_prev_errors END
     FROM (SELECT id, at, error_at, date_trunc('minute', at) AS m, good, bad, unknown, n, e, pn, pe
           FROM unnest($2::bigint[], $3::timestamptz[], $4::integer[], $5::integer[], $6::integer[],
             $7::timestamptz[], $8::integer[], $9::integer[], $10::integer[], $11::integer[])
             AS v(id, at, good, bad, unknown, error_at, n, e, pn, pe)) b
     WHERE r.org_id = $1 AND r.id = b.id`,
    [
      orgId,
      int8Array(counts.map((c) => c.readerId)),
      timestampArray(counts.map((c) => c.receivedAt)),
      int4Array(counts.map((c) => c.good)),
      int4Array(counts.map((c) => c.bad)),
      int4Array(counts.map((c) => c.unknown)),
      timestampArray(counts.map((c) => c.errorAt)),
      int4Array(counts.map((c) => c.latestMinute.reads)),
      int4Array(counts.map((c) => c.latestMinute.bad)),
      int4Array(counts.map((c) => c.minuteBefore.reads)),
      int4Array(counts.map((c) => c.minuteBefore.bad)),
    ],
  );
}

/** The per-minute buckets as stored on the reader's row. */
export interface RateBuckets {
  /** Start of the latest bucket; null before the first message. */
  minute: Date | null;
  reads: number;
  errors: number;
  prevReads: number;
  prevErrors: number;
}

/**
 * Reads and errors in the last 60 seconds, estimated from the two buckets as a sliding
 * window: all of the current minute's count, plus the previous minute's count weighted by
 * the share of that minute still inside the window. A reader silent for two minutes is at 0.
 */
export function perMinute(buckets: RateBuckets, now: number): { reads: number; errors: number } {
  if (!buckets.minute) return { reads: 0, errors: 0 };
  const current = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const stillIn = 1 - (now - current) / MINUTE_MS;
  const latest = buckets.minute.getTime();
  const round = (x: number) => Math.round(x * 10) / 10;
  if (latest === current) {
    return {
      reads: round(buckets.reads + buckets.prevReads * stillIn),
      errors: round(buckets.errors + buckets.prevErrors * stillIn),
    };
  }
  if (latest === current - MINUTE_MS) {
    return { reads: round(buckets.reads * stillIn), errors: round(buckets.errors * stillIn) };
  }
  return { reads: 0, errors: 0 };
}
