/**
 * docs/ingest.md "Group commit" and docs/tracking.md: the reader messages one group commit
 * stores are one batch for each asset, their reads applied in time order. So a late read
 * that shares a group with the newer reads it precedes gives the history of reads that
 * arrived in order, while the same read arriving in a later group splits the stay it falls
 * in (tracking rule 3). Either way the current location is the newest read's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parsePayload } from '../../src/ingest/adapters/index.js';
import { DEFAULT_CLOCK_POLICY } from '../../src/ingest/clock-policy.js';
import { messageKey } from '../../src/ingest/message-digests.js';
import { storeReaderMessages } from '../../src/ingest/reader-batch.js';
import { planMessage } from '../../src/ingest/reader-lanes.js';
import { IngestService } from '../../src/ingest/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { genericJson, ingestFixture, iso, readerRef } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

async function scene(tag: string) {
  const f = await ingestFixture(t);
  const [dock, gate] = [await f.location(), await f.location()];
  const asset = await f.asset(tag);
  const { reader } = await f.reader('generic-json', [
    [1, dock],
    [2, gate],
  ]);
  const base = Date.now() - 60_000;
  const payloads = [
    genericJson([[tag, 1, iso(base)]]),
    genericJson([[tag, 1, iso(base + 10_000)]]),
    genericJson([[tag, 1, iso(base + 30_000)]]),
    // Late: the gate read at +20 s arrives after the dock read at +30 s.
    genericJson([[tag, 2, iso(base + 20_000)]]),
  ];
  const work = (payload: string) => {
    const parsed = parsePayload('generic-json', payload);
    const plan = planMessage({
      reader: readerRef(reader),
      payload,
      parsed,
      source: 'mqtt' as const,
      receivedAt: Date.now(),
      key: messageKey(payload, parsed.reads),
    });
    if (!('whole' in plan)) throw new Error('a one-read message is one item');
    return plan.whole;
  };
  const rows = async () => (await f.history(asset)).map((h) => [h.location_id, h.event_observed_at]);
  return { f, dock, gate, asset, reader, base, payloads, work, rows };
}

it('messages stored in one group are one batch: the late read is placed as if it had come in order', async () => {
  const s = await scene('E200000000000000000000A1');
  await t.database.db.withOrg(s.f.orgId, (tx) =>
    storeReaderMessages(tx, s.f.orgId, s.payloads.map(s.work), DEFAULT_CLOCK_POLICY),
  );
  expect(await s.rows()).toEqual([
    [s.dock, iso(s.base + 30_000)],
    [s.gate, iso(s.base + 20_000)],
    [s.dock, iso(s.base)],
  ]);
  expect(await s.f.currentLocation(s.asset)).toBe(s.dock);
});

it('the same late read in a later group splits the stay it falls in (tracking rule 3)', async () => {
  const s = await scene('E200000000000000000000A2');
  const ingest = new IngestService(t.database.db);
  for (const payload of s.payloads) {
    await ingest.readerMessage(readerRef(s.reader), payload, 'mqtt', Date.now());
  }
  expect(await s.rows()).toEqual([
    [s.dock, iso(s.base + 20_001)],
    [s.gate, iso(s.base + 20_000)],
    [s.dock, iso(s.base)],
  ]);
  expect(await s.f.currentLocation(s.asset)).toBe(s.dock);
});
