/**
 * Reader messages committed together (group commit) come out exactly as if each had been
 * stored alone: per message outcomes and raw log rows, the readers' counters, the stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestBatchReport, IngestService } from '../../src/ingest/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { untilSessions } from '../helpers/database.js';
import { genericJson, ingestFixture, iso } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

const tag = (i: number) => `E2000000000000000000A${String(i).padStart(3, '0')}`;

describe('group commit of reader messages', () => {
  it('stores many messages of several readers in few transactions, each counted as if alone', async () => {
    const f = await ingestFixture(t);
    const [dock, gate] = [await f.location(), await f.location()];
    const assets = await Promise.all(Array.from({ length: 6 }, (_, i) => f.asset(tag(i))));
    // Reader A maps antenna 1 only; reader B covers every antenna.
    const a = await f.reader('generic-json', [[1, dock]]);
    const b = await f.reader('generic-json', [[null, gate]]);
    const ingest = new IngestService(t.database.db, undefined, undefined, { maxTransactions: 1 });
    const reports: IngestBatchReport[] = [];
    ingest.onBatch((r) => reports.push(r));
    const base = Date.now() - 600_000;
    const refA = { id: a.reader.id, orgId: f.orgId, family: 'generic-json' as const };
    const refB = { id: b.reader.id, orgId: f.orgId, family: 'generic-json' as const };

    // 40 messages: A reads assets 0-2 at the dock, B assets 3-5 at the gate, one round
    // per second; every A message also has an unknown tag and a read on an unmapped antenna.
    const sends: Array<Promise<unknown>> = [];
    for (let k = 0; k < 20; k++) {
      const at = (i: number) => iso(base + k * 1000 + i);
      sends.push(
        ingest.readerMessage(
          refA,
          genericJson([
            [tag(0), 1, at(0)],
            [tag(1), 1, at(1)],
            [tag(2), 1, at(2)],
            ['E2000000000000000000FFFF', 1, at(3)],
            [tag(0), 7, at(4)],
          ]),
          'mqtt',
        ),
        ingest.readerMessage(
          refB,
          genericJson([
            [tag(3), 2, at(0)],
            [tag(4), 3, at(1)],
            [tag(5), null, at(2)],
          ]),
          'webhook',
        ),
      );
    }
    // And one that is not JSON at all: logged and counted, and the others unaffected.
    sends.push(ingest.readerMessage(refB, Buffer.from('\u0000not json'), 'mqtt'));
    const outcomes = await Promise.all(sends);
    await ingest.settled();

    expect(outcomes[0]).toEqual({
      good: 3,
      bad: 1,
      unknown: 1,
      errors: ['no scan point for antenna 7'],
    });
    expect(outcomes[1]).toEqual({ good: 3, bad: 0, unknown: 0, errors: [] });
    expect(outcomes.at(-1)).toMatchObject({ good: 0, bad: 1, unknown: 0 });

    // Grouped: far fewer transactions than messages, and every message in exactly one.
    const committed = reports.filter((r) => r.committed);
    expect(committed.reduce((n, r) => n + r.messages, 0)).toBe(41);
    expect(committed.length).toBeLessThan(41);
    expect(Math.max(...committed.map((r) => r.messages))).toBeGreaterThan(1);

    expect(await f.readerCounters(a.reader.id)).toEqual({ good: 60, bad: 20, unknown: 20 });
    expect(await f.readerCounters(b.reader.id)).toEqual({ good: 60, bad: 1, unknown: 0 });
    const rawA = await f.rawMessages(a.reader.id);
    expect(rawA).toHaveLength(20);
    for (const row of rawA) {
      expect(row).toMatchObject({
        source: 'mqtt',
        good_reads: 3,
        bad_reads: 1,
        unknown_reads: 1,
        errors: ['no scan point for antenna 7'],
      });
    }
    const rawB = await f.rawMessages(b.reader.id);
    expect(rawB).toHaveLength(21);
    expect(
      rawB.filter((r) => r.source === 'webhook' && r.errors === null && r.good_reads === 3),
    ).toHaveLength(20);
    const notJson = rawB.find((r) => r.source === 'mqtt')!;
    expect(notJson.payload).toBe('\uFFFDnot json');
    expect(notJson.bad_reads).toBe(1);
    expect(notJson.errors).toHaveLength(1);

    // One stay per asset (stationary), from its first read to its last.
    for (const [i, id] of assets.entries()) {
      const history = await f.history(id);
      const place = i < 3 ? dock : gate;
      expect(history).toEqual([
        expect.objectContaining({ location_id: place, event_observed_at: iso(base + (i % 3)) }),
      ]);
      expect(await f.currentLocation(id)).toBe(place);
      expect(await f.report(id)).toMatchObject([{ asset_last_seen: iso(base + 19_000 + (i % 3)) }]);
    }
  });

  it('keeps each payload of a group in the raw log as storing it alone would: its text, its receipt', async () => {
    const f = await ingestFixture(t);
    const r = await f.reader('generic-json', [[null, await f.location()]]);
    const ingest = new IngestService(t.database.db, undefined, undefined, { maxTransactions: 1 });
    const ref = { id: r.reader.id, orgId: f.orgId, family: 'generic-json' as const };
    const payloads: Array<[Buffer, string]> = [
      [
        Buffer.from('{"reads": [], "note": "caf\u00e9 \u{1F69A}"}'),
        '{"reads": [], "note": "caf\u00e9 \u{1F69A}"}',
      ],
      [Buffer.from([0x7b, 0xff, 0x7d]), '{\uFFFD}'],
      [Buffer.from('a\u0000b'), 'a\uFFFDb'],
      [Buffer.from(''), ''],
      [Buffer.from('{"reads": "\u00fc"}'), '{"reads": "\u00fc"}'],
    ];
    const base = Date.now() - 1000;
    // Submitted at once: the first goes alone, the rest wait and share the next transaction.
    await Promise.all(payloads.map(([p], i) => ingest.readerMessage(ref, p, 'mqtt', base + i)));
    const { rows } = await t.database.db.pool.query<{ payload: string; ms: string }>(
      `SELECT payload, (extract(epoch FROM received_at) * 1000)::bigint AS ms FROM raw_log
       WHERE reader_id = $1 ORDER BY received_at`,
      [r.reader.id],
    );
    expect(rows.map((row) => [row.payload, Number(row.ms)])).toEqual(
      payloads.map(([, text], i) => [text, base + i]),
    );
  });

  it('places a moving asset read in many messages of one batch as storing them one by one would, one stay per move', async () => {
    const f = await ingestFixture(t);
    const places = [await f.location(), await f.location(), await f.location()];
    const [batched, alone] = [await f.asset(tag(100)), await f.asset(tag(101))];
    const r = await f.reader(
      'generic-json',
      places.map((p, i) => [i + 1, p]),
    );
    const ref = { id: r.reader.id, orgId: f.orgId, family: 'generic-json' as const };
    const ingest = new IngestService(t.database.db, undefined, undefined, { maxTransactions: 1 });
    const base = Date.now() - 600_000;
    const moves = Array.from({ length: 12 }, (_, k) => ({ at: base + k * 1000, antenna: (k % 3) + 1 }));
    const order = moves;
    const message = (tagValue: string, m: (typeof moves)[number]) =>
      genericJson([[tagValue, m.antenna, iso(m.at)]]);
    const outcomes = await Promise.all(
      order.map((m) => ingest.readerMessage(ref, message(tag(100), m), 'mqtt')),
    );
    for (const m of order) outcomes.push(await ingest.readerMessage(ref, message(tag(101), m), 'mqtt'));
    expect(outcomes.every((o) => o.good === 1)).toBe(true);
    const [h1, h2] = [await f.history(batched), await f.history(alone)];
    expect(h1.map((h) => [h.event_observed_at, h.location_id])).toEqual(
      [...moves].reverse().map((m) => [iso(m.at), places[m.antenna - 1]]),
    );
    expect(h1).toEqual(h2);
    expect(await f.currentLocation(batched)).toBe(places[2]);
    expect(await f.currentLocation(alone)).toBe(places[2]);
  });
  it('counts a read of an asset deleted while its batch waits for the asset lock as unknown, everywhere', async () => {
    const f = await ingestFixture(t);
    const place = await f.location();
    const [gone, kept] = [await f.asset(tag(200)), await f.asset(tag(201))];
    const r = await f.reader('generic-json', [[null, place]]);
    const ref = { id: r.reader.id, orgId: f.orgId, family: 'generic-json' as const };
    const ingest = new IngestService(t.database.db);
    const at = iso(Date.now() - 60_000);
    // The batch is counted before it takes its asset locks; the delete lands in between.
    const client = await t.database.db.pool.connect();
    let outcome: Awaited<ReturnType<IngestService['readerMessage']>>;
    try {
      await client.query('BEGIN');
      await client.query('SELECT id FROM assets WHERE id = $1 FOR UPDATE', [gone]);
      const stored = ingest.readerMessage(
        ref,
        genericJson([
          [tag(200), 1, at],
          [tag(201), 1, at],
        ]),
        'mqtt',
      );
      await untilSessions(t.database.db, "wait_event_type = 'Lock'", 'the batch waiting for the asset');
      await client.query('UPDATE assets SET deleted_at = now() WHERE id = $1', [gone]);
      await client.query('COMMIT');
      outcome = await stored;
    } finally {
      client.release();
    }
    expect(outcome).toEqual({ good: 1, bad: 0, unknown: 1, errors: [] });
    expect(await f.readerCounters(r.reader.id)).toEqual({ good: 1, bad: 0, unknown: 1 });
    expect(await f.rawMessages(r.reader.id)).toEqual([
      expect.objectContaining({ good_reads: 1, bad_reads: 0, unknown_reads: 1 }),
    ]);
    expect(await f.currentLocation(kept)).toBe(place);
    const stays = await t.database.db.pool.query('SELECT 1 FROM stays WHERE asset_id = $1', [gone]);
    expect(stays.rowCount).toBe(0);
  });
});
