/**
 * The raw log's shared rows (migration 0069): whatever the messages stored together, the
 * raw_log view gives each one back as if it had a row of its own.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestOutcome } from '../../src/ingest/outcome.js';
import { type LoggedMessage, logMessages, storableText } from '../../src/ingest/raw-log.js';
import { rawLogRows } from '../../src/ingest/raw-log-rows.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ingestFixture, type RawRow } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

interface Row extends RawRow {
  received_ms: number;
  reader_id: number;
}

describe('the raw log, a message a row', () => {
  it('gives back every message as stored, shared rows or not', async () => {
    const f = await ingestFixture(t);
    const readers = [
      (await f.reader('generic-json', [])).reader.id,
      (await f.reader('generic-json', [])).reader.id,
    ];
    const { pool } = t.database.db;
    const text = fc.string({
      unit: fc.constantFrom('a', '{', '"', 'é', '€', '𝄞', '\u0000', ' ', '\n'),
      maxLength: 30,
    });
    const payload = fc.oneof(
      text.map((s) => Buffer.from(s, 'utf8')),
      fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
      text,
    );
    const message = fc.record({
      reader: fc.constantFrom(0, 1),
      source: fc.constantFrom('mqtt', 'webhook'),
      payload,
      afterMs: fc.integer({ min: 0, max: 5000 }),
      good: fc.integer({ min: 0, max: 3 }),
      problem: fc.constantFrom('none', 'none', 'none', 'bad', 'unknown', 'error'),
    });
    const base = Date.now() - 60_000;
    let shared = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 25 }), async (given) => {
        await pool.query('DELETE FROM raw_messages WHERE org_id = $1', [f.orgId]);
        const messages: LoggedMessage[] = given.map((m) => ({
          reader: { id: readers[m.reader]! },
          payload: m.payload,
          source: m.source,
          receivedAt: base + m.afterMs + 0.5,
        }));
        const outcomes: IngestOutcome[] = given.map((m) => ({
          good: m.good,
          bad: m.problem === 'bad' ? 2 : 0,
          unknown: m.problem === 'unknown' ? 1 : 0,
          errors: m.problem === 'error' ? ['not JSON', 'é \u0000'] : [],
        }));
        await t.database.db.withOrg(f.orgId, (tx) => logMessages(tx, f.orgId, messages, outcomes));

        const { rows } = await pool.query<Row>(
          `SELECT (extract(epoch FROM received_at) * 1000)::bigint AS received_ms, reader_id, source, payload,
             good_reads, bad_reads, unknown_reads, errors
           FROM raw_log WHERE org_id = $1`,
          [f.orgId],
        );
        const want = given.map((m, i) => ({
          received_ms: base + m.afterMs,
          reader_id: readers[m.reader]!,
          source: m.source,
          payload: storableText(m.payload),
          good_reads: m.good,
          bad_reads: outcomes[i]!.bad,
          unknown_reads: outcomes[i]!.unknown,
          errors: outcomes[i]!.errors.length ? outcomes[i]!.errors.map(storableText) : null,
        }));
        const order = (list: Row[]) => list.map((r) => JSON.stringify(r)).sort();
        expect(order(rows)).toEqual(order(want));

        // Clean messages of one reader and source did share rows.
        const stored = await pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM raw_messages WHERE org_id = $1',
          [f.orgId],
        );
        const sizes = given.map((m) => Buffer.byteLength(storableText(m.payload)));
        const plan = rawLogRows(messages, sizes, outcomes);
        expect(stored.rows[0]!.n).toBe(plan.length);
        if (plan.length < given.length) shared++;
        // A message is never received before its row says (the row's time prunes a search).
        const early = await pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM raw_log WHERE org_id = $1 AND received_at < row_received_at',
          [f.orgId],
        );
        expect(early.rows[0]!.n).toBe(0);
      }),
      { numRuns: 40 },
    );
    // The runs did store messages in shared rows, or the check above proves little.
    expect(shared).toBeGreaterThan(10);
  });

  it('shows an organization its own messages only, shared rows included', async () => {
    const [a, b] = [await ingestFixture(t), await ingestFixture(t)];
    const readerA = (await a.reader('generic-json', [])).reader.id;
    const readerB = (await b.reader('generic-json', [])).reader.id;
    const clean = { good: 1, bad: 0, unknown: 0, errors: [] };
    const log = (orgId: number, readerId: number, names: string[]) =>
      t.database.db.withOrg(orgId, (tx) =>
        logMessages(
          tx,
          orgId,
          names.map((n) => ({
            reader: { id: readerId },
            payload: n,
            source: 'mqtt',
            receivedAt: Date.now(),
          })),
          names.map(() => clean),
        ),
      );
    await log(a.orgId, readerA, ['a1', 'a2', 'a3']);
    await log(b.orgId, readerB, ['b1', 'b2']);
    const seen = (orgId: number) =>
      t.database.db.readWithOrg(orgId, async (tx) =>
        (await tx.query<{ payload: string }>('SELECT payload FROM raw_log ORDER BY id, message')).rows.map(
          (r) => r.payload,
        ),
      );
    expect(await seen(a.orgId)).toEqual(['a1', 'a2', 'a3']);
    expect(await seen(b.orgId)).toEqual(['b1', 'b2']);
  });
});
