/**
 * Issue 12, item 3: each reader message has its effect exactly once while consumers crash.
 * The service runs as operators run it (`node dist/src/cli/main.js serve`, a process each)
 * on one database; one of them is killed outright (SIGKILL) in the middle of a stream and
 * started again. MQTT delivers at least once, so messages it had committed but not yet
 * acknowledged come again; they must be recognised (docs/ingest.md, "Redeliveries").
 *
 *  - the machine's Mosquitto (TEST_MQTT_URL, `.ci/run`): three instances on one shared
 *    subscription (`$share/<group>/<topic>`), persistent sessions; the killed one is
 *    restarted under its client id and the broker delivers its unacknowledged messages again;
 *  - the embedded broker: the one instance is killed; the readers send what it had not
 *    acknowledged again once it is back on the same port.
 *
 * Some messages are then sent again on purpose (a PUBACK lost on the way: the same bytes),
 * so that redeliveries are certain, not only likely. At the end, with every instance
 * stopped: the raw log holds each message once, the readers' counters count each read
 * once, and every asset has the one stay its reads make.
 */
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { connectMqtt } from '../../src/ingest/mqtt-connection.js';
import type { MqttCredentials } from '../../src/ingest/readers-service.js';
import { consumerClientId } from '../../src/ingest/transport.js';
import { createServices } from '../../src/services.js';
import { buildIfStale, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { Scrape } from '../helpers/prometheus.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { discardSession } from '../ingest/helpers.js';
import { until } from './load.js';

const mosquitto = inject('mqttUrl');
const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;
const TOKEN = 'scale-out-metrics-token-0123456789';
const READERS = 3;
/** Per reader. Small enough that what Mosquitto queues for the killed instance stays under its 1,000. */
const MESSAGES = 500;
const READS = 5;
const ASSETS = 10;
/** Messages each reader has sent and not yet seen acknowledged. */
const IN_FLIGHT = 4;
/** Messages sent a second time on purpose, per reader. */
const REPLAYED = 10;

interface SiteReader {
  id: number;
  topic: string;
  mqtt: MqttCredentials;
  locationId: number;
  /** Tag values of the assets only this reader reads. */
  tags: string[];
  assetIds: number[];
}

interface Site {
  orgId: number;
  readers: SiteReader[];
}

/** An organization with READERS readers, each with a location (all antennas) and its ASSETS tagged assets. */
async function createSite(database: TestDatabase): Promise<Site> {
  const services = await createServices(
    database.db,
    {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
    },
    new MemoryRateLimitStore({ limit: 1000, windowSeconds: 60 }),
  );
  const pool = database.db.pool;
  try {
    const org = await services.organizations.create(unique('Scale-out Org'));
    const readers: SiteReader[] = [];
    for (let r = 0; r < READERS; r++) {
      const { rows } = await pool.query<{ id: number }>(
        `INSERT INTO locations (org_id, external_key, name, valid_from) VALUES ($1, $2, $2, now() - interval '1 day')
         RETURNING id`,
        [org.id, unique(`DOOR-${r}`)],
      );
      const locationId = rows[0]!.id;
      const topic = `tagtrail-test/${unique('scale-out')}/reads`;
      const { reader, mqtt } = await services.readers.create(cliCaller(org.id), {
        family: 'generic-json',
        identity: unique('door-reader'),
        topic,
      });
      await services.readers.addScanPoint(cliCaller(org.id), reader.id, { antenna: null, locationId });
      const tags: string[] = [];
      const assetIds: number[] = [];
      for (let a = 0; a < ASSETS; a++) {
        const tag = `E2${randomBytes(11).toString('hex').toUpperCase()}`;
        const asset = await pool.query<{ id: number }>(
          `INSERT INTO assets (org_id, external_key, name, valid_from) VALUES ($1, $2, $2, now() - interval '1 day')
           RETURNING id`,
          [org.id, unique(`PALLET-${r}-${a}`)],
        );
        await pool.query(`INSERT INTO tags (org_id, tag_type, value, asset_id) VALUES ($1, 'rfid', $2, $3)`, [
          org.id,
          tag,
          asset.rows[0]!.id,
        ]);
        tags.push(tag);
        assetIds.push(asset.rows[0]!.id);
      }
      readers.push({ id: reader.id, topic, mqtt, locationId, tags, assetIds });
    }
    return { orgId: org.id, readers };
  } finally {
    await services.close();
  }
}

/**
 * The stream: message i of a reader reads READS of its assets, with the reader's own times
 * (within the last hour, so trusted), each message's bytes its own.
 */
function streamOf(site: Site, base: number) {
  const timeOf = (i: number, k: number) => base + i * 1000 + k;
  const payloads = site.readers.map((r) =>
    Array.from({ length: MESSAGES }, (_, i) =>
      JSON.stringify({
        reads: Array.from({ length: READS }, (_, k) => ({
          tag: r.tags[(i * READS + k) % ASSETS],
          antenna: 1,
          time: new Date(timeOf(i, k)).toISOString(),
        })),
      }),
    ),
  );
  /** Each asset's first and last read: the one stay its reads make. */
  const stays = new Map<number, { locationId: number; first: number; last: number }>();
  site.readers.forEach((r, ri) => {
    for (let i = 0; i < MESSAGES; i++) {
      for (let k = 0; k < READS; k++) {
        const assetId = r.assetIds[(i * READS + k) % ASSETS]!;
        const at = timeOf(i, k);
        const stay = stays.get(assetId) ?? { locationId: site.readers[ri]!.locationId, first: at, last: at };
        stay.first = Math.min(stay.first, at);
        stay.last = Math.max(stay.last, at);
        stays.set(assetId, stay);
      }
    }
  });
  return { payloads, stays };
}

/**
 * Readers publishing at QoS 1, IN_FLIGHT messages at a time each. A publish the broker
 * never acknowledged is sent again, as a reader does.
 */
async function startReaders(url: string, site: Site, payloads: string[][], login: boolean) {
  const clients: MqttClient[] = [];
  for (const r of site.readers) {
    clients.push(
      await connectMqtt(url, unique(login ? r.mqtt.username : 'tagtrail-scale-out-reader'), {
        reconnectPeriod: 200,
        ...(login ? { username: r.mqtt.username, password: r.mqtt.password } : {}),
      }),
    );
  }
  let acknowledged = 0;
  const publish = async (client: MqttClient, topic: string, payload: string) => {
    for (;;) {
      try {
        await client.publishAsync(topic, payload, { qos: 1 });
        return;
      } catch (err) {
        if (!String(err).includes('Connection closed')) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  // IN_FLIGHT loops per reader share its messages: the consumers run behind, so the one
  // killed holds messages in flight, some of them committed and not yet acknowledged.
  const done = Promise.all(
    site.readers.flatMap((r, ri) =>
      Array.from({ length: IN_FLIGHT }, async (_, w) => {
        for (let i = w; i < payloads[ri]!.length; i += IN_FLIGHT) {
          await publish(clients[ri]!, r.topic, payloads[ri]![i]!);
          acknowledged++;
        }
      }),
    ),
  );
  return {
    acknowledged: () => acknowledged,
    done,
    /** Sends these messages again, the same bytes from the same reader. */
    replay: (which: number[]) =>
      Promise.all(
        site.readers.map(async (r, ri) => {
          for (const i of which) await publish(clients[ri]!, r.topic, payloads[ri]![i]!);
        }),
      ),
    close: () => Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined))),
  };
}

/** The raw log of the site's readers, a message a row. */
async function rawRows(database: TestDatabase, site: Site) {
  const { rows } = await database.db.pool.query<{ n: number; distinct: number }>(
    'SELECT count(*)::int AS n, count(DISTINCT payload)::int AS distinct FROM raw_log WHERE reader_id = ANY($1)',
    [site.readers.map((r) => r.id)],
  );
  return rows[0]!;
}

/** Redeliveries recognised by a running instance (its /metrics). */
async function redeliveries(service: ServiceProcess): Promise<number> {
  const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return (await Scrape.parse(await res.text())).value('tagtrail_ingest_redeliveries_total', {
    family: 'generic-json',
    source: 'mqtt',
  });
}

/** What must hold once every instance stopped: each message once, each read counted once, the stays. */
async function expectExactlyOnce(
  database: TestDatabase,
  site: Site,
  stays: ReturnType<typeof streamOf>['stays'],
) {
  const sent = READERS * MESSAGES;
  expect(await rawRows(database, site)).toEqual({ n: sent, distinct: sent });
  const pool = database.db.pool;
  const counters = await pool.query<{ id: number; good: number; bad: number; unknown: number }>(
    `SELECT id, good_reads AS good, bad_reads AS bad, unknown_reads AS unknown FROM readers
     WHERE id = ANY($1) ORDER BY id`,
    [site.readers.map((r) => r.id)],
  );
  expect(counters.rows).toEqual(
    [...site.readers]
      .sort((a, b) => a.id - b.id)
      .map((r) => ({ id: r.id, good: MESSAGES * READS, bad: 0, unknown: 0 })),
  );
  const digests = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM message_digests WHERE reader_id = ANY($1)',
    [site.readers.map((r) => r.id)],
  );
  expect(digests.rows[0]!.n).toBe(sent);
  const { rows } = await pool.query<{
    asset_id: number;
    location_id: number;
    started_at: Date;
    last_seen_at: Date;
  }>(
    'SELECT asset_id, location_id, started_at, last_seen_at FROM stays WHERE org_id = $1 ORDER BY asset_id',
    [site.orgId],
  );
  expect(
    rows.map((s) => [s.asset_id, s.location_id, s.started_at.getTime(), s.last_seen_at.getTime()]),
  ).toEqual(
    [...stays.entries()].sort(([a], [b]) => a - b).map(([id, s]) => [id, s.locationId, s.first, s.last]),
  );
}

const report = (name: string, figures: Record<string, number>) =>
  process.stderr.write(`scale-out (${name}): ${JSON.stringify(figures)}\n`);

let database: TestDatabase;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  await buildIfStale();
  database = await createTestDatabase();
}, 180_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop().catch(() => undefined)));
  await database?.drop();
}, 120_000);

describe.skipIf(!mosquitto)("three instances on a shared subscription of the machine's Mosquitto", () => {
  const instances = [unique('scale-a'), unique('scale-b'), unique('scale-c')];
  afterAll(async () => {
    for (const instance of instances) await discardSession(mosquitto!, consumerClientId(instance));
  });

  it('stores every message once and counts every read once when one is killed mid-stream', {
    timeout: 300_000,
  }, async () => {
    const site = await createSite(database);
    const { payloads, stays } = streamOf(site, Date.now() - 3600_000);
    const group = unique('tagtrail-scale');
    const envOf = (instance: string) => ({
      DATABASE_URL: database.url,
      MQTT_URL: mosquitto!,
      TAGTRAIL_MQTT_SHARED_GROUP: group,
      TAGTRAIL_INSTANCE: instance,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      TAGTRAIL_METRICS_TOKEN: TOKEN,
    });
    // The readers exist before the instances start: each subscribes to their topics before it listens.
    const running = await Promise.all(instances.map((i) => spawnService(envOf(i))));
    services.push(...running);

    const readers = await startReaders(mosquitto!, site, payloads, false);
    try {
      const sent = READERS * MESSAGES;
      await until(async () => (await rawRows(database, site)).n >= sent / 3, 'a third of the stream stored');
      // Killed outright: what it committed but had not acknowledged comes again when it is back.
      const victim = running[0]!;
      victim.child.kill('SIGKILL');
      await until(() => victim.exit !== null, 'the killed instance gone');
      const restarted = await spawnService(envOf(instances[0]!));
      running[0] = restarted;
      services.push(restarted);
      await readers.done;
      await until(async () => (await rawRows(database, site)).distinct === sent, 'every message stored');

      const before = (await Promise.all(running.map(redeliveries))).reduce((a, b) => a + b, 0);
      await readers.replay(Array.from({ length: REPLAYED }, (_, i) => i * 7));
      await until(
        async () =>
          (await Promise.all(running.map(redeliveries))).reduce((a, b) => a + b, 0) >=
          before + READERS * REPLAYED,
        'the replayed messages recognised',
      );
      report('Mosquitto, shared subscription', {
        messages: sent,
        redeliveries_after_the_kill: before,
        replayed: READERS * REPLAYED,
      });
    } finally {
      await readers.close();
    }
    // Stopped (each stores and acknowledges what it holds): nothing can change the counts after this.
    for (const s of running) expect(await s.stop()).toEqual({ code: 0, signal: null });
    await expectExactlyOnce(database, site, stays);
  });
});

describe('the embedded broker', () => {
  it('stores every message once and counts every read once when the instance is killed mid-stream', {
    timeout: 300_000,
  }, async () => {
    const site = await createSite(database);
    const { payloads, stays } = streamOf(site, Date.now() - 3600_000);
    const env = {
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      TAGTRAIL_METRICS_TOKEN: TOKEN,
    };
    let service = await spawnService({ ...env, TAGTRAIL_MQTT_PORT: '0' });
    services.push(service);
    const mqttUrl = /MQTT broker \(embedded\) listening on (mqtt:\/\/\S+)/.exec(service.stderr())?.[1];
    expect(mqttUrl, service.stderr()).toBeDefined();

    const readers = await startReaders(mqttUrl!, site, payloads, true);
    try {
      const sent = READERS * MESSAGES;
      await until(() => readers.acknowledged() >= sent / 3, 'a third of the stream acknowledged');
      const victim = service;
      victim.child.kill('SIGKILL');
      await until(() => victim.exit !== null, 'the killed instance gone');
      // Back on the same port: the readers reconnect and send what was not acknowledged.
      service = await spawnService({ ...env, TAGTRAIL_MQTT_PORT: new URL(mqttUrl!).port });
      services.push(service);
      await readers.done;
      const before = await redeliveries(service);
      // The embedded broker acknowledges a message once it is stored or recognised.
      await readers.replay(Array.from({ length: REPLAYED }, (_, i) => i * 7));
      expect(await redeliveries(service)).toBe(before + READERS * REPLAYED);
      report('embedded broker', {
        messages: sent,
        redeliveries_after_the_kill: before,
        replayed: READERS * REPLAYED,
      });
    } finally {
      await readers.close();
    }
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    await expectExactlyOnce(database, site, stays);
  });
});
