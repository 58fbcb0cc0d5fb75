/**
 * End to end over MQTT: a reader publishes, the running service stores, the tracking API
 * shows it. Three transports, the same tests:
 *  - the embedded broker (no MQTT_URL): messages are stored before the broker acknowledges them;
 *  - the MQTT consumer on a separate Aedes broker (MQTT_URL), so `npm test` covers the consumer;
 *  - the MQTT consumer on the machine's Mosquitto (TEST_MQTT_URL), when given.
 */
import { readFileSync } from 'node:fs';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parsePayload } from '../../src/ingest/adapters/index.js';
import type { ReaderFamily } from '../../src/ingest/adapters/types.js';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import type { MqttCredentials } from '../../src/ingest/readers-service.js';
import { consumerClientId } from '../../src/ingest/transport.js';
import type { RunningService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { startTestService } from '../helpers/service.js';
import { discardSession, genericJson, ingestFixture, iso, publisher, unique, waitFor } from './helpers.js';

const FIXTURES = new URL('../fixtures/readers/', import.meta.url);

/** A recorded payload of each family, as its reader publishes it over MQTT. */
const RECORDED: Record<ReaderFamily, string> = {
  'impinj-r700': 'impinj-r700/single-event.json',
  'zebra-fx': 'zebra-fx/mqtt-batch-array.json',
  'csl-cs463': 'csl-cs463/multi-tag.json',
  'generic-json': 'generic-json/batch.json',
};

interface Transport {
  name: string;
  enabled: boolean;
  /** Settings for startService beyond the database; called again for a restart. */
  setup(): Promise<Record<string, string>>;
  /** The settings of a restart: the same broker, port and client id. */
  restart(running: RunningService, first: Record<string, string>): Record<string, string>;
  teardown(first: Record<string, string>): Promise<void>;
}

let aedes: EmbeddedBroker | undefined;
const mosquittoUrl = inject('mqttUrl');

const TRANSPORTS: Transport[] = [
  {
    name: 'the embedded broker (stored before it acknowledges)',
    enabled: true,
    setup: async () => ({ TAGTRAIL_MQTT_PORT: '0' }),
    restart: (running) => ({ TAGTRAIL_MQTT_PORT: new URL(running.mqttUrl).port }),
    teardown: async () => undefined,
  },
  {
    name: 'the MQTT consumer on an external Aedes broker',
    enabled: true,
    async setup() {
      aedes = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
      return { MQTT_URL: aedes.url, TAGTRAIL_INSTANCE: unique('test') };
    },
    restart: (_running, first) => first,
    teardown: async () => {
      await aedes?.stop();
    },
  },
  {
    name: "the MQTT consumer on the machine's broker (TEST_MQTT_URL)",
    enabled: Boolean(mosquittoUrl),
    setup: async () => ({ MQTT_URL: mosquittoUrl as string, TAGTRAIL_INSTANCE: unique('test') }),
    restart: (_running, first) => first,
    teardown: (first) => discardSession(first.MQTT_URL!, consumerClientId(first.TAGTRAIL_INSTANCE)),
  },
];

describe.each(TRANSPORTS.filter((x) => x.enabled))('reads over $name', (transport) => {
  let t: TestApp;
  let running: RunningService;
  let settings: Record<string, string>;
  const clients: MqttClient[] = [];
  const sessions: string[] = [];

  const start = (extra: Record<string, string>) =>
    startTestService({ DATABASE_URL: t.database.url, ...extra });
  /** A client logged in as the reader (the embedded broker requires it; the external ones allow anonymous). */
  const reader = async (login: MqttCredentials, options?: { clean?: boolean; clientId?: string }) => {
    const client = await publisher(running.mqttUrl, { ...options, login });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    settings = await transport.setup();
    running = await start(settings);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    await running?.stop();
    if (settings) await transport.teardown(settings);
    if (mosquittoUrl && settings?.MQTT_URL === mosquittoUrl) {
      for (const id of sessions) await discardSession(mosquittoUrl, id);
    }
    await t?.close();
  });

  it.each(Object.keys(RECORDED) as ReaderFamily[])(
    'a recorded %s payload shows up in the current location, the history and the report',
    async (family) => {
      const payload = readFileSync(new URL(RECORDED[family], FIXTURES));
      const parsed = parsePayload(family, payload);
      expect(parsed.errors).toEqual([]);
      const f = await ingestFixture(t);
      const dock = await f.location();
      // The asset carries the tag the recorded reader saw first.
      const asset = await f.asset(parsed.reads[0]!.tagValue);
      const { reader: r, topic, mqtt } = await f.reader(family, [[null, dock]]);
      await running.ingest.serving(topic);

      const before = Date.now();
      await (await reader(mqtt)).publishAsync(topic, payload, { qos: 1 });
      await waitFor(
        () => f.currentLocation(asset),
        (l) => l === dock,
      );
      const after = Date.now();

      const history = await f.history(asset);
      expect(history).toHaveLength(1);
      expect(history[0]!.location_id).toBe(dock);
      // The recordings are from 2024, far outside the clock bound: the time of receipt counts.
      const observed = Date.parse(history[0]!.event_observed_at);
      expect(observed).toBeGreaterThanOrEqual(before - 1);
      expect(observed).toBeLessThanOrEqual(after);

      const report = await f.report(asset);
      expect(report).toMatchObject([{ asset_id: asset, location_id: dock }]);

      const counters = await waitFor(
        () => f.readerCounters(r.id),
        (c) => c.good >= 1,
      );
      expect(counters.good + counters.unknown).toBe(parsed.reads.length);
      expect(counters.bad).toBe(0);
      const raw = await f.rawMessages(r.id);
      expect(raw).toHaveLength(1);
      expect(raw[0]).toMatchObject({ source: 'mqtt', payload: payload.toString() });
    },
  );

  it('places late reads in time and never moves the asset back', async () => {
    const f = await ingestFixture(t);
    const [shelf, dock] = [await f.location(), await f.location()];
    const asset = await f.asset('E2000000000000000000A001');
    const {
      reader: r,
      topic,
      mqtt,
    } = await f.reader('generic-json', [
      [1, shelf],
      [2, dock],
    ]);
    await running.ingest.serving(topic);
    const pub = await reader(mqtt);
    const now = Date.now();
    const t0 = now - 10 * 60_000; // at the shelf
    const t1 = now - 5 * 60_000; // then at the dock
    const late = now - 20 * 60_000; // a store-and-forward read from before both, at the shelf
    await pub.publishAsync(topic, genericJson([['E2000000000000000000A001', 1, iso(t0)]]), { qos: 1 });
    await pub.publishAsync(topic, genericJson([['E2000000000000000000A001', 2, iso(t1)]]), { qos: 1 });
    await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good === 2,
    );
    await pub.publishAsync(topic, genericJson([['E2000000000000000000A001', 1, iso(late)]]), { qos: 1 });
    await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good === 3,
    );

    expect(await f.currentLocation(asset)).toBe(dock);
    const history = await f.history(asset);
    // Reader times within the bound are kept as the observation times.
    expect(history.map((h) => [h.location_id, h.event_observed_at])).toEqual([
      [dock, iso(t1)],
      [shelf, iso(late)],
    ]);
    const report = await f.report(asset);
    expect(report).toMatchObject([{ location_id: dock, asset_last_seen: iso(t1) }]);
  });

  /** Resolves once this instance handled `n` more messages (the embedded broker acknowledges after storing). */
  const handled = (n: number) => {
    const stats = running.ingest.consumer?.stats;
    if (!stats) return Promise.resolve();
    const target = stats.stored + n;
    return waitFor(
      async () => stats.stored,
      (stored) => stored >= target,
    );
  };

  it('stores a message sent again with its reader times once; without them, each time', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const [timed, timeless] = [
      await f.asset('E2000000000000000000B001'),
      await f.asset('E2000000000000000000B002'),
    ];
    const { reader: r, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    await running.ingest.serving(topic);
    const at = iso(Date.now() - 60_000);
    const message = genericJson([['E2000000000000000000B001', 1, at]]);
    const pub = await reader(mqtt);
    await pub.publishAsync(topic, message, { qos: 1 });
    await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good === 1,
    );
    let settled = handled(1);
    await pub.publishAsync(topic, message, { qos: 1 });
    await settled;
    expect(await f.readerCounters(r.id)).toEqual({ good: 1, bad: 0, unknown: 0 });
    expect(await f.rawMessages(r.id)).toHaveLength(1);
    expect(await f.history(timed)).toEqual([
      {
        event_observed_at: at,
        location_id: dock,
        location_external_key: expect.any(String),
        duration_seconds: 0,
      },
    ]);

    // A reader reporting what it sees, without times: the same bytes are a new sighting.
    const seen = genericJson([['E2000000000000000000B002', 1, null]]);
    await pub.publishAsync(topic, seen, { qos: 1 });
    const first = await waitFor(
      () => f.report(timeless),
      (rows) => rows.length === 1,
    );
    settled = handled(1);
    await pub.publishAsync(topic, seen, { qos: 1 });
    await settled;
    await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good === 3,
    );
    const [again] = await f.report(timeless);
    expect(Date.parse(again!.asset_last_seen)).toBeGreaterThan(Date.parse(first[0]!.asset_last_seen));
    expect(await f.rawMessages(r.id)).toHaveLength(3);
    expect(await f.history(timeless)).toHaveLength(1);
  });

  it('counts reads of unknown tags and keeps them in the raw log without creating assets', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const known = await f.asset('E2000000000000000000C001');
    const { reader: r, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    await running.ingest.serving(topic);
    const assetsBefore = await t.database.db.pool.query('SELECT count(*)::int AS n FROM assets');
    const message = genericJson([
      ['E2000000000000000000C0FF', 1, null],
      ['E2000000000000000000C001', 1, null],
    ]);
    await (await reader(mqtt)).publishAsync(topic, message, { qos: 1 });
    const counters = await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good + c.unknown === 2,
    );
    expect(counters).toEqual({ good: 1, bad: 0, unknown: 1 });
    expect(await f.rawMessages(r.id)).toMatchObject([{ payload: message, good_reads: 1, unknown_reads: 1 }]);
    const assetsAfter = await t.database.db.pool.query('SELECT count(*)::int AS n FROM assets');
    expect(assetsAfter.rows[0].n).toBe(assetsBefore.rows[0].n);
    expect(await f.currentLocation(known)).toBe(dock);
  });

  it('logs and counts a malformed payload between two good ones and keeps consuming', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const first = await f.asset('E2000000000000000000D001');
    const second = await f.asset('E2000000000000000000D002');
    const third = await f.asset('E2000000000000000000D003');
    const { reader: r, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    await running.ingest.serving(topic);
    const pub = await reader(mqtt);
    await pub.publishAsync(topic, genericJson([['E2000000000000000000D001', 1, null]]), { qos: 1 });
    await pub.publishAsync(topic, '{"reads": [{"tag": "E2000000000000000000D0', { qos: 1 });
    await pub.publishAsync(topic, Buffer.from([0xff, 0x00, 0xfe, 0x7b]), { qos: 1 });
    await pub.publishAsync(topic, genericJson([['E2000000000000000000D002', 1, null]]), { qos: 1 });
    await waitFor(
      () => f.readerCounters(r.id),
      (c) => c.good === 2,
    );
    expect(await f.currentLocation(first)).toBe(dock);
    expect(await f.currentLocation(second)).toBe(dock);
    // Stored concurrently: the raw log is in commit order, not in publishing order.
    const raw = await f.rawMessages(r.id);
    expect(raw).toHaveLength(4);
    const truncated = raw.find((m) => m.payload.startsWith('{"reads": [{"tag"'));
    expect(truncated).toMatchObject({
      good_reads: 0,
      errors: [expect.stringMatching(/truncated JSON value/)],
    });
    const binary = raw.find((m) => m.payload.includes('\uFFFD'));
    expect(binary?.errors?.length).toBeGreaterThan(0);
    expect((await f.readerCounters(r.id)).bad).toBeGreaterThanOrEqual(2);

    await pub.publishAsync(topic, genericJson([['E2000000000000000000D003', 1, null]]), { qos: 1 });
    await waitFor(
      () => f.currentLocation(third),
      (l) => l === dock,
    );
  });

  /**
   * What a reader does with a QoS 1 message the broker never acknowledged: send it again.
   * mqtt.js rejects a publish queued while it replays its session if the connection drops
   * once more (the broker going down as it comes up); that message was never acknowledged,
   * so sending it again is the reader's job, not a loss by the service.
   */
  async function publishUntilAcked(client: MqttClient, topic: string, payload: string): Promise<void> {
    for (;;) {
      try {
        await client.publishAsync(topic, payload, { qos: 1 });
        return;
      } catch (error) {
        if (!String(error).includes('Connection closed')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  it('loses nothing when the service restarts in the middle of a stream', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const tags = Array.from({ length: 5 }, (_, i) => `E20000000000000000E0000${i}`);
    const assets = await Promise.all(tags.map((tag) => f.asset(tag)));
    const { reader: r, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    await running.ingest.serving(topic);

    // A reader with a persistent session that keeps publishing QoS 1 through the restart.
    const clientId = unique(`${mqtt.username}-stream`);
    sessions.push(clientId);
    const pub = await reader(mqtt, { clean: false, clientId });
    const total = 150;
    const base = Date.now() - 60 * 60_000;
    const timeOf = (i: number) => iso(base + i * 1000);
    const acked: Array<Promise<unknown>> = [];
    let restarted: Promise<void> | undefined;
    let down = false;
    let publishedWhileDown = 0;
    for (let i = 0; i < total; i++) {
      if (down) publishedWhileDown++;
      acked.push(publishUntilAcked(pub, topic, genericJson([[tags[i % tags.length]!, 1, timeOf(i)]])));
      if (i === 50) {
        down = true;
        restarted = (async () => {
          await running.stop();
          running = await start(transport.restart(running, settings));
          down = false;
        })();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await restarted;
    expect(publishedWhileDown).toBeGreaterThan(0);
    await Promise.all(acked);

    const distinct = async () => {
      const { rows } = await t.database.db.pool.query<{ n: number }>(
        'SELECT count(DISTINCT payload)::int AS n FROM raw_log WHERE reader_id = $1',
        [r.id],
      );
      return rows[0]!.n;
    };
    await waitFor(distinct, (n) => n === total, 20_000);
    // Every asset's last sighting is its last message of the stream.
    for (const [k, asset] of assets.entries()) {
      const lastIndex = total - 1 - ((total - 1 - k) % tags.length);
      const report = await f.report(asset);
      expect(report).toMatchObject([{ location_id: dock, asset_last_seen: timeOf(lastIndex) }]);
    }
  }, 60_000);
});
