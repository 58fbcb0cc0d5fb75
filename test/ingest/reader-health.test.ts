/**
 * Per-reader health (docs/metrics.md, "Per-reader health"): the per-minute buckets on the
 * reader's row, the sliding-minute estimate, and GET /internal/readers of a running service
 * whose embedded broker knows who is connected.
 */
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import {
  bumpReaderCounters,
  countsByReader,
  messageCounts,
  perMinute,
  type RateBuckets,
} from '../../src/ingest/reader-counters.js';
import type { RunningService } from '../../src/runtime.js';
import { startTestService } from '../helpers/service.js';
import {
  type Browser,
  buildInternalApp,
  type InternalTestApp,
  insertAsset,
  insertLocation,
} from '../internal/helpers.js';
import { genericJson, publisher, unique, waitFor } from './helpers.js';

const MINUTE = 60_000;
const M = Date.UTC(2026, 0, 5, 10, 0); // a minute's start

describe('perMinute', () => {
  const buckets = (minute: number | null, reads: number, prevReads: number): RateBuckets => ({
    minute: minute === null ? null : new Date(minute),
    reads,
    errors: reads / 10,
    prevReads,
    prevErrors: prevReads / 10,
  });

  it('is 0 before the first message and after two quiet minutes', () => {
    expect(perMinute(buckets(null, 0, 0), M)).toEqual({ reads: 0, errors: 0 });
    expect(perMinute(buckets(M, 100, 50), M + 2 * MINUTE)).toEqual({ reads: 0, errors: 0 });
  });

  it('counts the current minute whole and the previous one for the part still in the last 60 s', () => {
    expect(perMinute(buckets(M, 100, 60), M)).toEqual({ reads: 160, errors: 16 });
    expect(perMinute(buckets(M, 100, 60), M + 15_000)).toEqual({ reads: 145, errors: 14.5 });
    expect(perMinute(buckets(M, 100, 60), M + 59_999)).toEqual({ reads: 100, errors: 10 });
  });

  it('once the latest bucket is the previous minute, counts the part of it still in the window', () => {
    expect(perMinute(buckets(M, 100, 60), M + MINUTE + 30_000)).toEqual({ reads: 50, errors: 5 });
  });
});

describe('countsByReader', () => {
  const outcome = (good: number, bad: number) => ({ good, bad, unknown: 0 });

  it('dates the last error at the receipt of the latest bad message, not of the batch', () => {
    const a = { id: 7 };
    const b = { id: 3 };
    const counts = countsByReader(
      [
        { reader: a, receivedAt: M + 1_000 },
        { reader: a, receivedAt: M + 9_000 },
        { reader: b, receivedAt: M + 2_000 },
        { reader: a, receivedAt: M + 4_000 },
        { reader: a, receivedAt: M + 20_000 },
      ],
      [outcome(1, 1), outcome(2, 0), outcome(1, 0), outcome(0, 3), outcome(5, 0)],
    );
    const none = { reads: 0, bad: 0 };
    expect(counts).toEqual([
      {
        readerId: 3,
        receivedAt: M + 2_000,
        errorAt: null,
        good: 1,
        bad: 0,
        unknown: 0,
        latestMinute: { reads: 1, bad: 0 },
        minuteBefore: none,
      },
      {
        readerId: 7,
        receivedAt: M + 20_000,
        errorAt: M + 4_000,
        good: 8,
        bad: 4,
        unknown: 0,
        latestMinute: { reads: 12, bad: 4 },
        minuteBefore: none,
      },
    ]);
  });

  it("puts each message's reads in its own minute's bucket, whatever order the batch holds them in", () => {
    const a = { id: 7 };
    const counts = countsByReader(
      [
        { reader: a, receivedAt: M + 59_000 },
        { reader: a, receivedAt: M + MINUTE + 1_000 },
        { reader: a, receivedAt: M - 2 * MINUTE },
        { reader: a, receivedAt: M + 58_000 },
        { reader: a, receivedAt: M + MINUTE + 2_000 },
      ],
      [outcome(3, 1), outcome(2, 0), outcome(10, 5), outcome(1, 1), outcome(0, 2)],
    );
    expect(counts).toEqual([
      {
        readerId: 7,
        receivedAt: M + MINUTE + 2_000,
        errorAt: M + MINUTE + 2_000,
        good: 16,
        bad: 9,
        unknown: 0,
        latestMinute: { reads: 4, bad: 2 },
        minuteBefore: { reads: 6, bad: 2 },
      },
    ]);
    // Two minutes apart, the older one is in neither bucket.
    const apart = countsByReader(
      [
        { reader: a, receivedAt: M + 1_000 },
        { reader: a, receivedAt: M + 2 * MINUTE },
      ],
      [outcome(4, 0), outcome(1, 0)],
    );
    expect(apart[0]).toMatchObject({
      latestMinute: { reads: 1, bad: 0 },
      minuteBefore: { reads: 0, bad: 0 },
    });
  });
});

describe('the buckets on the reader row', () => {
  let t: InternalTestApp;
  let orgId: number;
  beforeAll(async () => {
    t = await buildInternalApp();
    orgId = (await t.newOrg()).id;
  });
  afterAll(() => t.close());

  it('add, rotate, take late messages into the previous minute and start over after a gap', async () => {
    const { reader } = await t.services.readers.create(cliCaller(orgId), {
      family: 'generic-json',
      identity: unique('health'),
      topic: unique('health/topic'),
    });
    const bump = (at: number, good: number, bad: number, unknown = 0) =>
      t.database.db.withOrg(orgId, (tx) =>
        bumpReaderCounters(tx, orgId, [messageCounts(reader.id, at, { good, bad, unknown })]),
      );
    const state = async () => {
      const r = await t.services.readers.get(orgId, reader.id);
      return {
        minute: r.rates.minute?.getTime() ?? null,
        now: [r.rates.reads, r.rates.errors],
        prev: [r.rates.prevReads, r.rates.prevErrors],
        totals: [r.goodReads, r.badReads, r.unknownReads],
        lastErrorAt: r.lastErrorAt?.getTime() ?? null,
        lastMessageAt: r.lastMessageAt?.getTime() ?? null,
      };
    };

    await bump(M + 1_000, 3, 1, 1);
    expect(await state()).toEqual({
      minute: M,
      now: [5, 1],
      prev: [0, 0],
      totals: [3, 1, 1],
      lastErrorAt: M + 1_000,
      lastMessageAt: M + 1_000,
    });
    await bump(M + 30_000, 2, 0);
    expect(await state()).toMatchObject({ minute: M, now: [7, 1], prev: [0, 0], lastErrorAt: M + 1_000 });
    // The next minute: the latest bucket becomes the previous one.
    await bump(M + MINUTE + 5_000, 4, 2);
    expect(await state()).toMatchObject({ minute: M + MINUTE, now: [6, 2], prev: [7, 1] });
    // A late message of the minute before goes there; one older still only into the totals.
    await bump(M + 50_000, 1, 0);
    await bump(M - 5 * MINUTE, 10, 0);
    expect(await state()).toMatchObject({
      minute: M + MINUTE,
      now: [6, 2],
      prev: [8, 1],
      totals: [20, 3, 1],
      lastMessageAt: M + MINUTE + 5_000,
      lastErrorAt: M + MINUTE + 5_000,
    });
    // A batch whose bad message came before its good ones: the error keeps its own time,
    // and an error older than the one on the row leaves it.
    const batch = (at: number, errorAt: number) =>
      t.database.db.withOrg(orgId, (tx) =>
        bumpReaderCounters(tx, orgId, [
          { ...messageCounts(reader.id, at, { good: 1, bad: 1, unknown: 0 }), errorAt },
        ]),
      );
    await batch(M + MINUTE + 40_000, M + MINUTE + 10_000);
    expect(await state()).toMatchObject({
      lastMessageAt: M + MINUTE + 40_000,
      lastErrorAt: M + MINUTE + 10_000,
    });
    await batch(M + MINUTE + 45_000, M + MINUTE + 6_000);
    expect(await state()).toMatchObject({ lastErrorAt: M + MINUTE + 10_000 });
    // After a quiet minute both buckets start over.
    await bump(M + 3 * MINUTE, 1, 0);
    expect(await state()).toMatchObject({ minute: M + 3 * MINUTE, now: [1, 0], prev: [0, 0] });
  });

  it("a batch across a minute's end counts each message in its own minute", async () => {
    const { reader } = await t.services.readers.create(cliCaller(orgId), {
      family: 'generic-json',
      identity: unique('health'),
      topic: unique('health/topic'),
    });
    const store = (messages: Array<[at: number, good: number, bad: number]>) =>
      t.database.db.withOrg(orgId, (tx) =>
        bumpReaderCounters(
          tx,
          orgId,
          countsByReader(
            messages.map(([at]) => ({ reader, receivedAt: at })),
            messages.map(([, good, bad]) => ({ good, bad, unknown: 0 })),
          ),
        ),
      );
    const buckets = async () => {
      const r = await t.services.readers.get(orgId, reader.id);
      return {
        minute: r.rates.minute?.getTime(),
        now: [r.rates.reads, r.rates.errors],
        prev: [r.rates.prevReads, r.rates.prevErrors],
      };
    };
    await store([[M + 30_000, 1, 0]]);
    // The row's minute, its end and the next minute in one batch.
    await store([
      [M + 59_000, 3, 1],
      [M + MINUTE + 1_000, 2, 0],
    ]);
    expect(await buckets()).toEqual({ minute: M + MINUTE, now: [2, 0], prev: [5, 1] });
    // The row's minute and the one before it: each to its bucket.
    await store([
      [M + MINUTE + 9_000, 1, 1],
      [M + 40_000, 5, 0],
    ]);
    expect(await buckets()).toEqual({ minute: M + MINUTE, now: [4, 1], prev: [10, 1] });
    // Two minutes on, with a message of the minute before it: the row's buckets are too old.
    await store([
      [M + 3 * MINUTE + 1_000, 1, 0],
      [M + 2 * MINUTE + 59_000, 6, 2],
    ]);
    expect(await buckets()).toEqual({ minute: M + 3 * MINUTE, now: [1, 0], prev: [8, 2] });
  });
});

describe('GET /internal/readers health over the embedded broker', () => {
  let t: InternalTestApp;
  let running: RunningService;
  let me: Browser;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    t = await buildInternalApp();
    me = (await t.newOrg()).browser;
    running = await startTestService({ DATABASE_URL: t.database.url });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    await running?.stop();
    await t?.close();
  });

  interface Health {
    connected: boolean | null;
    reads_per_minute: number;
    errors_per_minute: number;
    last_error_at: string | null;
  }
  /** The reader as the running service lists it, signed in with the test's session. */
  const listed = async (readerId: number) => {
    const res = await fetch(`${running.url}/internal/readers`, { headers: { cookie: me.cookie } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      data: Array<{ id: number; last_message_at: string | null; health: Health }>;
    };
    return body.data.find((r) => r.id === readerId)!;
  };

  it('shows connected, reads and errors per minute and the last error after a reader publishes', async () => {
    const dock = await insertLocation(t, me.orgId, { external_key: unique('DOCK'), name: 'Dock' });
    await insertAsset(t, me.orgId, {
      external_key: unique('A'),
      name: 'Pallet',
      tag: 'E2000000000000000000C001',
    });
    const created = await t.services.readers.create(cliCaller(me.orgId), {
      family: 'generic-json',
      identity: unique('reader'),
      topic: unique('site/health'),
    });
    const reader = created.reader;
    await t.services.readers.addScanPoint(cliCaller(me.orgId), reader.id, { antenna: 1, locationId: dock });
    await running.ingest.serving(reader.topic);

    expect((await listed(reader.id)).health).toEqual({
      connected: false,
      reads_per_minute: 0,
      errors_per_minute: 0,
      last_error_at: null,
    });
    const client = await publisher(running.mqttUrl, { login: created.mqtt });
    clients.push(client);
    await waitFor(
      () => listed(reader.id),
      (r) => r.health.connected === true,
    );

    await client.publishAsync(
      reader.topic,
      genericJson([
        ['E2000000000000000000C001', 1, null], // stored
        ['E2000000000000000000C001', 9, null], // no scan point: an error
        ['E2000000000000000000C0FF', 1, null], // unknown tag
      ]),
      { qos: 1 },
    );
    const after = await waitFor(
      () => listed(reader.id),
      (r) => r.last_message_at !== null,
    );
    // Exactly 3 and 1 unless the minute turned between the publish and the listing.
    expect(after.health.reads_per_minute).toBeGreaterThan(0);
    expect(after.health.reads_per_minute).toBeLessThanOrEqual(3);
    expect(after.health.errors_per_minute).toBeGreaterThan(0);
    expect(after.health.errors_per_minute).toBeLessThanOrEqual(1);
    expect(after.health.last_error_at).toBe(after.last_message_at);

    await client.endAsync();
    await waitFor(
      () => listed(reader.id),
      (r) => r.health.connected === false,
    );
    // A service that cannot see the broker (here the test's own app) says so: null, not false.
    const own = (await me.get('/internal/readers')).json() as { data: Array<{ id: number; health: Health }> };
    expect(own.data.find((r) => r.id === reader.id)!.health.connected).toBeNull();
  });

  it('records a packet over the size limit as an error of the reader whose connection it closed', async () => {
    const created = await t.services.readers.create(cliCaller(me.orgId), {
      family: 'generic-json',
      identity: unique('reader'),
      topic: unique('site/oversize'),
    });
    const reader = created.reader;
    await running.ingest.serving(reader.topic);
    const client = await publisher(running.mqttUrl, { login: created.mqtt });
    clients.push(client);
    // QoS 0: nothing to resend at the reconnect. 9 MiB, over the 8 MiB a packet may carry.
    client.publish(reader.topic, Buffer.alloc(9 * 1024 * 1024, 'x'), { qos: 0 });
    const rows = await waitFor(
      async () =>
        (
          await t.database.db.pool.query<{ payload: string; bad_reads: number; errors: string[] }>(
            'SELECT payload, bad_reads, errors FROM raw_messages WHERE reader_id = $1',
            [reader.id],
          )
        ).rows,
      (found) => found.length > 0,
    );
    expect(rows).toEqual([
      {
        payload: '',
        bad_reads: 1,
        errors: [
          expect.stringMatching(
            /^MQTT message refused, connection closed: publish packet of \d+ bytes is over the limit of 8388608 bytes$/,
          ),
        ],
      },
    ]);
    const health = (await listed(reader.id)).health;
    expect(health.last_error_at).not.toBeNull();
    expect(health.errors_per_minute).toBeGreaterThan(0);
  });
});
