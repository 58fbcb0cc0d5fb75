/**
 * Reader messages split by the lanes of their tags (src/ingest/reader-lanes.ts): a message
 * placed by several transactions is still booked once, with the outcome it would have had
 * alone; parts placed before a crash are placed again harmlessly by the redelivery; and
 * assets passing between readers keep an exact history whatever the lanes' interleaving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePayload } from '../../src/ingest/adapters/index.js';
import { DEFAULT_CLOCK_POLICY } from '../../src/ingest/clock-policy.js';
import { messageKey } from '../../src/ingest/message-digests.js';
import { storeReaderMessages } from '../../src/ingest/reader-batch.js';
import { laneOfKey, planMessage, READER_LANES } from '../../src/ingest/reader-lanes.js';
import { IngestService } from '../../src/ingest/service.js';
import { matchKey } from '../../src/tracking/resolve.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { genericJson, ingestFixture, iso, readerRef } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

const lane = (tag: string) => laneOfKey(matchKey('rfid', tag));

/** `count` tags of a prefix no other test uses: sequential EPCs, which fall in every lane. */
function tagsAcrossLanes(prefix: string, count: number): string[] {
  const tags: string[] = [];
  for (let i = 0; tags.length < count; i++) tags.push(`${prefix}${String(i).padStart(4, '0')}`);
  return tags;
}

describe('reader messages split by lane', () => {
  it.each([
    ['in parts, one transaction per lane and one to book it', false],
    ['whole, in one transaction holding its idle lanes', true],
  ])(
    'stores a message whose tags fall in several lanes %s, counted and logged as if stored alone',
    async (_, across) => {
      const f = await ingestFixture(t);
      const dock = await f.location();
      const tags = tagsAcrossLanes('E20000000000000000AA', 8);
      const assets = await Promise.all(tags.map((tag) => f.asset(tag)));
      const { reader } = await f.reader('generic-json', [[1, dock]]);
      const base = Date.now() - 60_000;
      // Reads of every tag, interleaved with an unknown tag and unmapped antennas, so that the
      // errors come from several lanes and must be put back in read order.
      const rows: Array<[string, number | null, string | null]> = [];
      tags.forEach((tag, i) => {
        rows.push([tag, 1, iso(base + i)]);
        rows.push([tag, 10 + i, iso(base + i)]);
      });
      rows.push(['E2000000000000000000FFFF', 1, iso(base)]);
      const payload = genericJson(rows);
      expect(new Set(tags.map(lane)).size).toBeGreaterThan(1);
      const plan = planMessage({
        reader: readerRef(reader),
        payload,
        parsed: parsePayload('generic-json', payload),
        source: 'mqtt',
        receivedAt: Date.now(),
        key: null,
      });
      if (!('parts' in plan)) throw new Error(`the tags all fell in one lane of ${READER_LANES}`);

      const ingest = new IngestService(t.database.db, undefined, undefined, { acrossIdleLanes: across });
      let transactions = 0;
      ingest.onBatch(() => transactions++);
      const outcome = await ingest.readerMessage(readerRef(reader), payload, 'mqtt');
      expect(transactions).toBe(across ? 1 : plan.parts.length + 1);
      const errors = tags.map((_, i) => `no scan point for antenna ${10 + i}`);
      expect(outcome).toEqual({ good: 8, bad: 8, unknown: 1, errors });
      expect(await f.readerCounters(reader.id)).toEqual({ good: 8, bad: 8, unknown: 1 });
      const raw = await f.rawMessages(reader.id);
      expect(raw).toHaveLength(1);
      expect(raw[0]).toMatchObject({ payload, good_reads: 8, bad_reads: 8, unknown_reads: 1, errors });
      for (const [i, id] of assets.entries()) {
        expect(await f.history(id)).toEqual([
          expect.objectContaining({ location_id: dock, event_observed_at: iso(base + i) }),
        ]);
      }
    },
  );

  it('places again the parts of a message committed before a crash, and books its redelivery once', async () => {
    const f = await ingestFixture(t);
    const [dock, gate] = [await f.location(), await f.location()];
    const tags = tagsAcrossLanes('E20000000000000000BB', 6);
    const assets = await Promise.all(tags.map((tag) => f.asset(tag)));
    const { reader } = await f.reader('generic-json', [
      [1, dock],
      [2, gate],
    ]);
    const base = Date.now() - 60_000;
    const payload = genericJson(
      tags.flatMap((tag, i) => [
        [tag, 1, iso(base + i)],
        [tag, 2, iso(base + 1000 + i)],
      ]),
    );
    const receivedAt = Date.now();
    const message = {
      reader: readerRef(reader),
      payload,
      parsed: parsePayload('generic-json', payload),
      source: 'mqtt' as const,
      receivedAt,
      key: messageKey(payload, parsePayload('generic-json', payload).reads),
    };
    const plan = planMessage(message);
    if (!('parts' in plan)) throw new Error(`the tags all fell in one lane of ${READER_LANES}`);
    // The crash: the parts committed, the book entry never did (the message was not acknowledged).
    await t.database.db.withOrg(f.orgId, (tx) =>
      storeReaderMessages(tx, f.orgId, plan.parts, DEFAULT_CLOCK_POLICY),
    );
    expect(await f.rawMessages(reader.id)).toEqual([]);

    const ingest = new IngestService(t.database.db);
    const redelivered = await ingest.readerMessage(readerRef(reader), payload, 'mqtt', receivedAt + 5000);
    expect(redelivered).toEqual({ good: 12, bad: 0, unknown: 0, errors: [] });
    const again = await ingest.readerMessage(readerRef(reader), payload, 'mqtt', receivedAt + 9000);
    expect(again).toMatchObject({ good: 0, bad: 0, unknown: 0, duplicate: true });

    expect(await f.rawMessages(reader.id)).toHaveLength(1);
    expect(await f.readerCounters(reader.id)).toEqual({ good: 12, bad: 0, unknown: 0 });
    for (const [i, id] of assets.entries()) {
      expect((await f.history(id)).map((h) => [h.location_id, h.event_observed_at])).toEqual([
        [gate, iso(base + 1000 + i)],
        [dock, iso(base + i)],
      ]);
      expect(await f.currentLocation(id)).toBe(gate);
    }
  });

  it('keeps an exact history of assets passing between readers, whatever the lanes interleave', async () => {
    const f = await ingestFixture(t);
    const [dock, gate] = [await f.location(), await f.location()];
    const tags = tagsAcrossLanes('E20000000000000000CC', 12);
    const assets = await Promise.all(tags.map((tag) => f.asset(tag)));
    const readers = [
      (await f.reader('generic-json', [[null, dock]])).reader,
      (await f.reader('generic-json', [[null, gate]])).reader,
    ];
    const ingest = new IngestService(t.database.db);
    const base = Date.now() - 600_000;
    const rounds = 20;
    // Round k: every asset is read twice by reader k % 2, then moves to the other one.
    const sends: Array<Promise<unknown>> = [];
    for (let k = 0; k < rounds; k++) {
      const at = (i: number, j: number) => iso(base + k * 1000 + i * 10 + j);
      const payload = genericJson(
        tags.flatMap((tag, i) => [
          [tag, 1, at(i, 0)],
          [tag, 1, at(i, 1)],
        ]),
      );
      sends.push(ingest.readerMessage(readerRef(readers[k % 2]!), payload, 'mqtt'));
    }
    await Promise.all(sends);
    await ingest.settled();

    for (const [i, id] of assets.entries()) {
      const history = await f.history(id);
      const expected = Array.from({ length: rounds }, (_, k) => [
        k % 2 ? gate : dock,
        iso(base + k * 1000 + i * 10),
      ]);
      expect(history.map((h) => [h.location_id, h.event_observed_at])).toEqual(expected.reverse());
      expect(await f.currentLocation(id)).toBe(gate);
      expect(await f.report(id)).toMatchObject([
        { asset_last_seen: iso(base + (rounds - 1) * 1000 + i * 10 + 1) },
      ]);
    }
    for (const r of readers) expect(await f.readerCounters(r.id)).toEqual({ good: 240, bad: 0, unknown: 0 });
  });
});
