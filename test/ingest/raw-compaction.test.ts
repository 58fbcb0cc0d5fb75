/**
 * Merging the raw log's small rows after the fact (src/ingest/raw-compaction.ts): the
 * raw_log view gives back the same messages before and after, clean rows of a reader and
 * bucket become shared rows, and nothing else moves.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/ingest/limiter.js';
import type { IngestOutcome } from '../../src/ingest/outcome.js';
import {
  bucketStart,
  COMPACTION,
  type CompactionPolicy,
  compactRawLog,
  RawCompaction,
} from '../../src/ingest/raw-compaction.js';
import { type LoggedMessage, logMessages } from '../../src/ingest/raw-log.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { type IngestFixture, ingestFixture } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

const MINUTE = 60_000;
/** Buckets of a minute, all of them settled at `now`. */
const policy: CompactionPolicy = { ...COMPACTION, bucketMs: MINUTE, settleMs: 0, lookbackMs: 3_600_000 };
const CLEAN: IngestOutcome = { good: 1, bad: 0, unknown: 0, errors: [] };

/** Every message of the organization as raw_log gives it, without where it is stored. */
async function messagesOf(orgId: number): Promise<string[]> {
  const { rows } = await t.database.db.pool.query(
    `SELECT (extract(epoch FROM received_at) * 1000)::bigint AS ms, reader_id, source, payload,
       good_reads, bad_reads, unknown_reads, errors
     FROM raw_log WHERE org_id = $1`,
    [orgId],
  );
  return rows.map((r) => JSON.stringify(r)).sort();
}

async function rowsOf(orgId: number) {
  const { rows } = await t.database.db.pool.query<{
    reader_id: string;
    source: string;
    ms: string;
    messages: number;
    bytes: number;
    clean: boolean;
  }>(
    `SELECT reader_id, source, (extract(epoch FROM received_at) * 1000)::bigint AS ms,
       coalesce(cardinality(message_bytes), 1) AS messages, octet_length(payload) AS bytes,
       bad_reads = 0 AND unknown_reads = 0 AND errors IS NULL AS clean
     FROM raw_messages WHERE org_id = $1 ORDER BY received_at, id`,
    [orgId],
  );
  return rows;
}

const log = (f: IngestFixture, messages: LoggedMessage[], outcomes = messages.map(() => CLEAN)) =>
  t.database.db.withOrg(f.orgId, (tx) => logMessages(tx, f.orgId, messages, outcomes));

describe('merging the raw log small rows', () => {
  it('keeps every message as it was and merges the clean rows of a reader and bucket', async () => {
    const f = await ingestFixture(t);
    const readers = [
      (await f.reader('generic-json', [])).reader.id,
      (await f.reader('generic-json', [])).reader.id,
    ];
    const base = bucketStart(Date.now() - 10 * MINUTE, MINUTE);
    const now = base + 3 * MINUTE;
    const message = fc.record({
      reader: fc.constantFrom(0, 1),
      source: fc.constantFrom('mqtt', 'webhook'),
      payload: fc.string({ unit: fc.constantFrom('a', '{', '"', 'é', '€', '𝄞', ' ', '\n'), maxLength: 20 }),
      // Three buckets, and one still open at `now` (its rows stay as they are).
      afterMs: fc.integer({ min: 0, max: 4 * MINUTE - 1 }),
      good: fc.integer({ min: 0, max: 3 }),
      problem: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'none', 'bad', 'unknown', 'error'),
    });
    // Each inner array: the messages one transaction stored together.
    const batches = fc.array(fc.array(message, { minLength: 1, maxLength: 3 }), {
      minLength: 1,
      maxLength: 12,
    });
    /** Runs in which rows were merged: enough of them, or the checks prove little. */
    let mergedRuns = 0;
    await fc.assert(
      fc.asyncProperty(batches, async (given) => {
        await t.database.db.pool.query('DELETE FROM raw_messages WHERE org_id = $1', [f.orgId]);
        for (const batch of given) {
          await log(
            f,
            batch.map((m) => ({
              reader: { id: readers[m.reader]! },
              payload: m.payload,
              source: m.source,
              receivedAt: base + m.afterMs,
            })),
            batch.map((m) => ({
              good: m.good,
              bad: m.problem === 'bad' ? 1 : 0,
              unknown: m.problem === 'unknown' ? 1 : 0,
              errors: m.problem === 'error' ? ['not JSON'] : [],
            })),
          );
        }
        const before = await messagesOf(f.orgId);
        const rowsBefore = await rowsOf(f.orgId);
        await compactRawLog(t.database.db, now, policy);
        expect(await messagesOf(f.orgId)).toEqual(before);

        const rowsAfter = await rowsOf(f.orgId);
        const key = (r: (typeof rowsAfter)[number]) => JSON.stringify(r);
        // Rows with a problem, and those of the open bucket, are where they were.
        const kept = (rows: typeof rowsAfter) =>
          rows
            .filter((r) => !r.clean || Number(r.ms) >= now)
            .map(key)
            .sort();
        expect(kept(rowsAfter)).toEqual(kept(rowsBefore));
        // The clean rows of a settled bucket: one per reader, source and bucket.
        const groups = rowsAfter
          .filter((r) => r.clean && Number(r.ms) < now)
          .map((r) => `${r.reader_id}:${r.source}:${bucketStart(Number(r.ms), MINUTE)}`);
        expect(new Set(groups).size).toBe(groups.length);
        if (rowsAfter.length < rowsBefore.length) mergedRuns++;

        // A message is never before its row's time, and a second pass has nothing to do.
        const early = await t.database.db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM raw_log WHERE org_id = $1 AND received_at < row_received_at',
          [f.orgId],
        );
        expect(early.rows[0]!.n).toBe(0);
        await compactRawLog(t.database.db, now, policy);
        expect(await rowsOf(f.orgId)).toEqual(rowsAfter);
      }),
      { numRuns: 30 },
    );
    expect(mergedRuns).toBeGreaterThan(8);
  });

  it('merges a row that committed late into its bucket at the next pass', async () => {
    const f = await ingestFixture(t);
    const reader = { id: (await f.reader('generic-json', [])).reader.id };
    const base = bucketStart(Date.now() - 10 * MINUTE, MINUTE);
    const at = (ms: number, payload: string) => ({ reader, payload, source: 'mqtt', receivedAt: base + ms });
    await log(f, [at(10, '{"a":1}')]);
    await log(f, [at(20, '{"a":2}')]);
    const now = base + 2 * MINUTE;
    await compactRawLog(t.database.db, now, policy);
    expect((await rowsOf(f.orgId)).map((r) => r.messages)).toEqual([2]);
    await log(f, [at(15, '{"a":3}')]);
    await compactRawLog(t.database.db, now, policy);
    expect((await rowsOf(f.orgId)).map((r) => r.messages)).toEqual([3]);
    const { rows } = await t.database.db.pool.query<{ payload: string }>(
      'SELECT payload FROM raw_log WHERE org_id = $1 ORDER BY id, message',
      [f.orgId],
    );
    // In the order they were received.
    expect(rows.map((r) => r.payload)).toEqual(['{"a":1}', '{"a":3}', '{"a":2}']);
  });

  it('closes a merged row past its size, leaves large rows and other organizations alone', async () => {
    const [f, other] = [await ingestFixture(t), await ingestFixture(t)];
    const reader = { id: (await f.reader('generic-json', [])).reader.id };
    const otherReader = { id: (await other.reader('generic-json', [])).reader.id };
    const base = bucketStart(Date.now() - 10 * MINUTE, MINUTE);
    const payload = (i: number) => `{"n":${String(i).padStart(24, '0')}}`; // 30 bytes
    for (let i = 0; i < 10; i++) {
      await log(f, [{ reader, payload: payload(i), source: 'mqtt', receivedAt: base + i }]);
      await log(other, [{ reader: otherReader, payload: payload(i), source: 'mqtt', receivedAt: base + i }]);
    }
    const large = 'x'.repeat(200);
    await log(f, [{ reader, payload: large, source: 'mqtt', receivedAt: base + 50 }]);
    const before = await messagesOf(f.orgId);
    const otherBefore = await messagesOf(other.orgId);
    await compactRawLog(t.database.db, base + MINUTE, { ...policy, rowBytes: 100, smallRowBytes: 100 });
    expect(await messagesOf(f.orgId)).toEqual(before);
    expect(await messagesOf(other.orgId)).toEqual(otherBefore);
    const rows = await rowsOf(f.orgId);
    // 300 bytes of small messages in rows closed past 100 bytes, and the large row as it was.
    expect(rows.filter((r) => r.bytes < 100 || r.messages > 1).map((r) => r.bytes)).toEqual([90, 90, 120]);
    expect(rows.filter((r) => r.messages === 1 && r.bytes === 200)).toHaveLength(1);
  });

  it('leaves rows received on a fraction of a millisecond and unsettled buckets as they are', async () => {
    const f = await ingestFixture(t);
    const readerId = (await f.reader('generic-json', [])).reader.id;
    const base = bucketStart(Date.now() - 10 * MINUTE, MINUTE);
    const insert = (at: string) =>
      t.database.db.pool.query(
        `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, good_reads, bad_reads, unknown_reads)
         VALUES ($1::timestamptz, $2, $3, 'mqtt', '{}', 1, 0, 0)`,
        [at, f.orgId, readerId],
      );
    const iso = (ms: number) => new Date(ms).toISOString();
    await insert(
      iso(base)
        .replace('Z', '')
        .replace(/\.(\d{3})$/, '.$1250Z'),
    );
    await insert(
      iso(base + 5)
        .replace('Z', '')
        .replace(/\.(\d{3})$/, '.$1750Z'),
    );
    await insert(iso(base + 2 * MINUTE));
    await insert(iso(base + 2 * MINUTE + 5));
    const before = await rowsOf(f.orgId);
    await compactRawLog(t.database.db, base + 2 * MINUTE + 10, policy);
    expect(await rowsOf(f.orgId)).toEqual(before);
    expect(before).toHaveLength(4);
  });

  it('merges as a pass at start with the default buckets, and logs a pass that failed', async () => {
    const f = await ingestFixture(t);
    const reader = { id: (await f.reader('generic-json', [])).reader.id };
    // A bucket that ended well over the settling time ago, within the look-back.
    const base = bucketStart(Date.now() - 30 * MINUTE, COMPACTION.bucketMs);
    for (let i = 0; i < 3; i++) {
      await log(f, [{ reader, payload: `{"i":${i}}`, source: 'mqtt', receivedAt: base + i * 1000 }]);
    }
    const infos: object[] = [];
    const logger = { ...silentLogger, info: (obj: object) => infos.push(obj) };
    const compaction = new RawCompaction(t.database.db, { logger });
    await compaction.start();
    await compaction.stop();
    expect((await rowsOf(f.orgId)).map((r) => r.messages)).toEqual([3]);
    expect(infos).toContainEqual(expect.objectContaining({ merged: expect.any(Number) }));

    const errors: object[] = [];
    const down = {
      system: () => Promise.reject(new Error('database down')),
    } as unknown as typeof t.database.db;
    const failing = new RawCompaction(down, {
      logger: { ...silentLogger, error: (obj: object) => errors.push(obj) },
    });
    await failing.start();
    await failing.stop();
    expect(errors).toHaveLength(1);
  });
});
