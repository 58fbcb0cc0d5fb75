/**
 * The embedded broker's ingest hook, one of the two MQTT transports (the other:
 * mqtt-consumer.test.ts), with a stand-in for the database: what is acknowledged when, what
 * happens when storing fails, and what arrives before the hook is attached.
 */
import type { MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../../src/ingest/broker.js';
import { BrokerIngest } from '../../src/ingest/broker-ingest.js';
import { type IngestLogger, silentLogger } from '../../src/ingest/limiter.js';
import { directoryOf, type FakeIngest, fakeIngest } from '../helpers/fake-ingest.js';
import { publisher, unique, waitFor } from './helpers.js';

const clients: MqttClient[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true).catch(() => undefined)));
});

const reader = async (url: string, options: { clean?: boolean; clientId?: string } = {}) => {
  const c = await publisher(url, options);
  clients.push(c);
  return c;
};

describe("the embedded broker's ingest hook", () => {
  const setup = async (ingest: FakeIngest, topics: string[], logger: IngestLogger = silentLogger) => {
    const hook = new BrokerIngest();
    const own = await startEmbeddedBroker({
      host: '127.0.0.1',
      port: 0,
      onPublish: (topic, payload, sender, done) => hook.take(topic, payload, sender, done),
    });
    const directory = await directoryOf(topics);
    hook.attach({ directory, ingest, logger, retryDelaysMs: [10] });
    cleanups.push(async () => {
      await hook.close();
      await directory.stop();
      await own.stop();
    });
    return { hook, own };
  };

  it('acknowledges a reader message only after it is stored', async () => {
    const topic = unique('t');
    let release: (() => void) | undefined;
    const ingest = fakeIngest(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    const { own } = await setup(ingest, [topic]);
    const pub = await reader(own.url);
    let acked = false;
    const publishing = pub.publishAsync(topic, 'read', { qos: 1 }).then(() => {
      acked = true;
    });
    await waitFor(
      async () => release,
      (r) => r !== undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(acked).toBe(false);
    release!();
    await publishing;
    expect(ingest.stored).toEqual(['read']);
  });

  it('refuses a message it could not store; the reader sends it again after reconnecting', async () => {
    const topic = unique('t');
    const ingest = fakeIngest((_payload, call) => {
      if (call <= 3) throw new Error('database unavailable');
    });
    const { hook, own } = await setup(ingest, [topic]);
    const pub = await reader(own.url, { clean: false, clientId: unique('reader') });
    await pub.publishAsync(topic, 'read', { qos: 1 });
    expect(ingest.calls).toHaveLength(4);
    expect(ingest.stored).toEqual(['read']);
    expect(hook.stats).toEqual({ stored: 1, failed: 1 });
  });

  it('logs failures to store once a second, with the count left out, however many messages fail', async () => {
    const topics = Array.from({ length: 8 }, () => unique('t'));
    // Every message's two attempts fail until each reader has been refused once.
    let attempts = 0;
    const ingest = fakeIngest(() => {
      if (++attempts <= 16) throw new Error('database unavailable');
    });
    const lines: Array<{ level: string; msg?: string; suppressed?: number }> = [];
    const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, msg, ...obj });
    const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    const { hook, own } = await setup(ingest, topics, logger);
    const pubs = await Promise.all(
      topics.map(() => reader(own.url, { clean: false, clientId: unique('reader') })),
    );
    await Promise.all(pubs.map((pub, i) => pub.publishAsync(topics[i]!, 'read', { qos: 1 })));
    expect(hook.stats.failed).toBe(8);
    expect(ingest.stored).toHaveLength(8);
    // All eight failed within a second or two (they were sent at once): a line or two each
    // for the retries and for the refusals, not eight.
    expect(lines.filter((l) => l.msg?.endsWith('retrying')).length).toBeLessThanOrEqual(2);
    expect(lines.filter((l) => l.level === 'error').length).toBeLessThanOrEqual(2);
  });

  it('passes messages on other topics through, and holds reader messages until attached', async () => {
    const topic = unique('t');
    const hook = new BrokerIngest();
    const own = await startEmbeddedBroker({
      host: '127.0.0.1',
      port: 0,
      onPublish: (t, payload, sender, done) => hook.take(t, payload, sender, done),
    });
    cleanups.push(async () => {
      await hook.close();
      await own.stop();
    });
    const pub = await reader(own.url);
    let acked = false;
    const publishing = pub.publishAsync(topic, 'early', { qos: 1 }).then(() => {
      acked = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(acked).toBe(false);
    const ingest = fakeIngest();
    const directory = await directoryOf([topic]);
    cleanups.push(() => directory.stop());
    hook.attach({ directory, ingest, logger: silentLogger });
    await publishing;
    expect(ingest.stored).toEqual(['early']);
    await pub.publishAsync('somewhere/else', 'not a reader', { qos: 1 });
    expect(ingest.calls).toEqual(['early']);
  });

  it("refuses a reader's message on a topic that is another reader's now; stores nothing", async () => {
    const [mine, theirs] = [unique('t'), unique('t')];
    const ingest = fakeIngest();
    const { hook } = await setup(ingest, [mine, theirs]);
    // directoryOf numbers the readers 1, 2 in the order of their topics.
    const answer = (topic: string, sender: number | undefined) =>
      new Promise<Error | null>((resolve) => hook.take(topic, Buffer.from(topic), sender, resolve));
    expect((await answer(theirs, 1))?.name).toBe('NotReaderTopicError');
    expect((await answer('no/reader/here', 1))?.name).toBe('NotReaderTopicError');
    expect(ingest.calls).toEqual([]);
    expect(await answer(mine, 1)).toBeNull();
    // Without access control (no sender known) the topic alone decides, as on an external broker.
    expect(await answer(theirs, undefined)).toBeNull();
    expect(ingest.stored).toEqual([mine, theirs]);
  });
});
