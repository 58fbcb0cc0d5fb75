/**
 * The MQTT consumer, one of the two MQTT transports (the other: broker-ingest.test.ts), with a
 * stand-in for the database: what is acknowledged when, what happens when storing fails, how
 * many messages are stored at once, and stopping.
 */
import type { MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { ReaderDirectory } from '../../src/ingest/directory.js';
import { type IngestLogger, silentLogger } from '../../src/ingest/limiter.js';
import { MqttConsumer } from '../../src/ingest/mqtt-consumer.js';
import { directoryOf, type FakeIngest, fakeIngest } from '../helpers/fake-ingest.js';
import { discardSession, publisher, unique, waitFor } from './helpers.js';

let broker: EmbeddedBroker;
const clients: MqttClient[] = [];
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true).catch(() => undefined)));
});
afterAll(() => broker?.stop());

const reader = async (url = broker.url, options: { clean?: boolean; clientId?: string } = {}) => {
  const c = await publisher(url, options);
  clients.push(c);
  return c;
};

describe('the MQTT consumer', () => {
  const consumer = async (
    ingest: FakeIngest,
    topics: string[],
    options: { clientId?: string; concurrency?: number; logger?: IngestLogger } = {},
  ) => {
    const directory = await directoryOf(topics);
    const c = new MqttConsumer({
      url: broker.url,
      clientId: options.clientId ?? unique('tagtrail-ingest-test'),
      directory,
      ingest,
      logger: options.logger ?? silentLogger,
      concurrency: options.concurrency,
      retryDelaysMs: [10],
      clientOptions: { reconnectPeriod: 100 },
    });
    c.start();
    await c.ready();
    cleanups.push(async () => {
      await c.stop();
      await directory.stop();
    });
    return c;
  };

  it('stores messages with bounded concurrency', async () => {
    const topic = unique('t');
    const ingest = fakeIngest(() => new Promise((resolve) => setTimeout(resolve, 15)));
    const c = await consumer(ingest, [topic], { concurrency: 4 });
    const pub = await reader();
    const payloads = Array.from({ length: 40 }, (_, i) => `{"tag":"E2${i}"}`);
    await Promise.all(payloads.map((p) => pub.publishAsync(topic, p, { qos: 1 })));
    await waitFor(
      async () => ingest.stored.length,
      (n) => n === payloads.length,
    );
    expect(new Set(ingest.stored)).toEqual(new Set(payloads));
    expect(ingest.maxActive).toBeGreaterThan(1);
    expect(ingest.maxActive).toBeLessThanOrEqual(4);
    expect(c.stats).toEqual({ stored: 40, failed: 0, unrouted: 0, leftoversDropped: 0, retainedDropped: 0 });
  });

  it('leaves a message it could not store unacknowledged and gets it again by reconnecting', async () => {
    const topic = unique('t');
    // The database refuses the first three attempts at one message (two per delivery).
    const ingest = fakeIngest((payload, call) => {
      if (payload === 'unlucky' && call <= 3) throw new Error('connection terminated unexpectedly');
    });
    const c = await consumer(ingest, [topic]);
    const pub = await reader();
    await pub.publishAsync(topic, 'before', { qos: 1 });
    await pub.publishAsync(topic, 'unlucky', { qos: 1 });
    await pub.publishAsync(topic, 'after', { qos: 1 });
    await waitFor(
      async () => ingest.stored,
      (s) => s.includes('unlucky'),
      15_000,
    );
    expect(ingest.calls.filter((x) => x === 'unlucky')).toHaveLength(4);
    // The others were acknowledged before the reconnect, so they were not delivered again.
    expect(ingest.stored.filter((x) => x !== 'unlucky').sort()).toEqual(['after', 'before']);
    expect(c.stats.failed).toBe(1);
    expect(c.connected).toBe(true);
  }, 20_000);

  it('logs failures to store once a second, with the count left out, however many messages fail', async () => {
    const topic = unique('t');
    // Every attempt fails for a while, as in an outage: twenty messages, two attempts each.
    let attempts = 0;
    const ingest = fakeIngest(() => {
      if (++attempts <= 40) throw new Error('connection terminated unexpectedly');
    });
    const lines: Array<{ level: string; msg?: string }> = [];
    const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, msg, ...obj });
    const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    const c = await consumer(ingest, [topic], { logger, concurrency: 20 });
    const pub = await reader();
    const payloads = Array.from({ length: 20 }, (_, i) => `m${i}`);
    await Promise.all(payloads.map((p) => pub.publishAsync(topic, p, { qos: 1 })));
    await waitFor(
      async () => new Set(ingest.stored).size,
      (n) => n === payloads.length,
      15_000,
    );
    expect(c.stats.failed).toBeGreaterThanOrEqual(20);
    // They failed within a second or two of each other: a line or two each, not twenty.
    expect(lines.filter((l) => l.msg?.endsWith('retrying')).length).toBeLessThanOrEqual(2);
    expect(
      lines.filter((l) => l.msg?.startsWith('storing a reader message failed;') && l.level === 'error')
        .length,
    ).toBeLessThanOrEqual(2);
  }, 20_000);

  it('on stop, finishes the messages in flight; its session keeps what arrives meanwhile', async () => {
    const topic = unique('t');
    const clientId = unique('tagtrail-ingest-test');
    let release: (() => void) | undefined;
    const ingest = fakeIngest(
      (payload) =>
        new Promise<void>((resolve) => {
          if (payload === 'slow') release = resolve;
          else resolve();
        }),
    );
    const first = await consumer(ingest, [topic], { clientId });
    const pub = await reader();
    await pub.publishAsync(topic, 'slow', { qos: 1 });
    await waitFor(
      async () => release,
      (r) => r !== undefined,
    );
    const stopped = first.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done).toBe(false);
    release!();
    await stopped;
    expect(ingest.stored).toEqual(['slow']);

    // Published while no consumer runs: the broker keeps it for the session.
    await pub.publishAsync(topic, 'while-down', { qos: 1 });
    const again = fakeIngest();
    await consumer(again, [topic], { clientId });
    await waitFor(
      async () => again.stored,
      (s) => s.includes('while-down'),
    );
    // 'slow' was acknowledged before the stop completed, so it does not come back.
    expect(again.stored).toEqual(['while-down']);
  });

  it('never logs the password in MQTT_URL: connected, or failing to connect', async () => {
    const lines: unknown[] = [];
    const logger = {
      ...silentLogger,
      info: (o: unknown) => lines.push(o),
      warn: (o: unknown) => lines.push(o),
    };
    const directory = await directoryOf([unique('t')]);
    cleanups.push(() => directory.stop());
    const secret = 'MqttUrlPassw0rd-4242';
    // A port nobody listens on, then the broker (which takes any login).
    for (const url of [
      `mqtt://svc:${secret}@127.0.0.1:1`,
      broker.url.replace('mqtt://', `mqtt://svc:${secret}@`),
    ]) {
      const c = new MqttConsumer({ url, clientId: unique('t'), directory, ingest: fakeIngest(), logger });
      cleanups.push(() => c.stop());
      c.start();
      await c.firstAttempt();
      await waitFor(
        async () => lines.length,
        (n) => n > 0,
      );
    }
    await waitFor(
      async () => JSON.stringify(lines),
      (text) => text.includes('sessionPresent'),
    );
    expect(JSON.stringify(lines)).toContain('(hidden)@127.0.0.1');
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('follows the reader directory: subscribes to new topics and drops removed ones', async () => {
    const [a, b] = [unique('t'), unique('t')];
    const topics = [a];
    const directory = new ReaderDirectory({
      source: async () =>
        topics.map((topic, i) => ({ id: i + 1, orgId: 1, family: 'generic-json' as const, topic })),
      logger: silentLogger,
      pollMs: 50,
    });
    await directory.start();
    const ingest = fakeIngest();
    const c = new MqttConsumer({
      url: broker.url,
      clientId: unique('t'),
      directory,
      ingest,
      logger: silentLogger,
    });
    c.start();
    cleanups.push(async () => {
      await c.stop();
      await directory.stop();
    });
    await c.ready();
    expect(c.isSubscribed(a)).toBe(true);
    topics.splice(0, 1, b);
    await waitFor(
      async () => [c.isSubscribed(a), c.isSubscribed(b)],
      ([x, y]) => !x && y!,
    );
    const pub = await reader();
    await pub.publishAsync(a, 'old', { qos: 1 });
    await pub.publishAsync(b, 'new', { qos: 1 });
    await waitFor(
      async () => ingest.stored,
      (s) => s.includes('new'),
    );
    expect(ingest.stored).toEqual(['new']);
  });

  it("drops, and unsubscribes from, a deleted reader's topic its old session still delivers", async () => {
    const topic = unique('t');
    const clientId = unique('tagtrail-ingest-test');
    const first = await consumer(fakeIngest(), [topic], { clientId });
    await first.stop();
    // The reader was deleted while the service was down; the broker kept the subscription.
    // Another reader's topic, live, carries a marker after it.
    const live = unique('t');
    const ingest = fakeIngest();
    const again = await consumer(ingest, [live], { clientId });
    const pub = await reader();
    await pub.publishAsync(topic, 'orphan', { qos: 1 });
    await waitFor(
      async () => again.stats.unrouted,
      (n) => n === 1,
    );
    // Once the broker has acknowledged the unsubscribe (not after a guessed pause, which a
    // loaded machine outlasted), nothing more is delivered on that topic.
    await waitFor(
      async () => again.stats.leftoversDropped,
      (n) => n === 1,
    );
    await pub.publishAsync(topic, 'orphan-2', { qos: 1 });
    // The broker forwards one publisher's messages to a subscriber in order: once the marker
    // published after 'orphan-2' is stored, 'orphan-2' would have arrived before it.
    await pub.publishAsync(live, 'marker', { qos: 1 });
    await waitFor(
      async () => ingest.stored,
      (s) => s.includes('marker'),
    );
    expect(again.stats.unrouted).toBe(1);
    expect(ingest.calls).toEqual(['marker']);
  });

  it('uses $share/<group>/ filters when a shared group is configured', () => {
    const c = new MqttConsumer({
      url: broker.url,
      clientId: 'x',
      sharedGroup: 'tagtrail',
      directory: new ReaderDirectory({ source: async () => [], logger: silentLogger }),
      ingest: fakeIngest(),
      logger: silentLogger,
    });
    expect(c.filterFor('site/dock-3/reads')).toBe('$share/tagtrail/site/dock-3/reads');
  });
});

const machineBroker = inject('mqttUrl');

describe.skipIf(!machineBroker)("shared subscriptions on the machine's broker (TEST_MQTT_URL)", () => {
  it('split the messages of a topic between the instances of a group, each stored once', async () => {
    const topic = unique('tagtrail-test/shared');
    const group = unique('group');
    const instances = [fakeIngest(), fakeIngest()];
    const consumers: MqttConsumer[] = [];
    for (const ingest of instances) {
      const directory = await directoryOf([topic]);
      const clientId = unique('tagtrail-ingest-test');
      const c = new MqttConsumer({
        url: machineBroker!,
        clientId,
        sharedGroup: group,
        directory,
        ingest,
        logger: silentLogger,
      });
      c.start();
      await c.ready();
      consumers.push(c);
      cleanups.push(async () => {
        await c.stop();
        await directory.stop();
        await discardSession(machineBroker!, clientId);
      });
    }
    const pub = await reader(machineBroker);
    const payloads = Array.from({ length: 40 }, (_, i) => `shared-${i}`);
    for (const p of payloads) await pub.publishAsync(topic, p, { qos: 1 });
    await waitFor(
      async () => instances[0]!.stored.length + instances[1]!.stored.length,
      (n) => n >= payloads.length,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const all = [...instances[0]!.stored, ...instances[1]!.stored];
    expect(all.sort()).toEqual([...payloads].sort());
    expect(instances[0]!.stored.length).toBeGreaterThan(0);
    expect(instances[1]!.stored.length).toBeGreaterThan(0);
  });
});
