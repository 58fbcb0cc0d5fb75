/**
 * The MQTT_URL consumer through a database outage: nothing is acknowledged while the
 * database is away, the consumer waits for it instead of reconnecting on a growing
 * backoff, and everything the broker held is stored once it answers again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DatabaseUnavailableError, waitUntilAvailable } from '../../src/db/unavailable.js';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { ReaderDirectory } from '../../src/ingest/directory.js';
import { silentLogger } from '../../src/ingest/limiter.js';
import { MqttConsumer } from '../../src/ingest/mqtt-consumer.js';
import type { IngestOutcome } from '../../src/ingest/outcome.js';
import { publisher, unique, waitFor } from '../ingest/helpers.js';

let broker: EmbeddedBroker;
beforeAll(async () => {
  // A plain broker (no ingest hook): it acknowledges publishers and holds the consumer's session.
  broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
});
afterAll(() => broker?.stop());

it('holds messages in the broker during an outage and stores them all once the database is back', async () => {
  const topic = unique('outage');
  let down = false;
  let pings = 0;
  const stored = new Set<string>();
  const ingest = {
    async readerMessage(_reader: unknown, payload: Buffer | string): Promise<IngestOutcome> {
      if (down) throw new DatabaseUnavailableError(new Error('connect ECONNREFUSED'));
      stored.add(payload.toString());
      return { good: 1, bad: 0, unknown: 0, errors: [] };
    },
  };
  const directory = new ReaderDirectory({
    source: async () => [{ id: 1, orgId: 1, family: 'generic-json' as const, topic }],
    logger: silentLogger,
  });
  await directory.start();
  const consumer = new MqttConsumer({
    url: broker.url,
    clientId: unique('tagtrail-ingest-outage'),
    directory,
    ingest,
    logger: silentLogger,
    retryDelaysMs: [10],
    clientOptions: { reconnectPeriod: 100 },
    databaseAvailable: (signal) =>
      waitUntilAvailable(
        async () => {
          pings++;
          if (down) throw new Error('still down');
        },
        signal,
        50,
      ),
  });
  consumer.start();
  const pub = await publisher(broker.url);
  try {
    await consumer.ready();
    await pub.publishAsync(topic, 'before', { qos: 1 });
    await waitFor(
      async () => stored.has('before'),
      (v) => v,
    );

    down = true;
    const during = Array.from({ length: 30 }, (_, i) => `during-${i}`);
    await Promise.all(during.map((p) => pub.publishAsync(topic, p, { qos: 1 })));
    await waitFor(
      async () => consumer.stats.failed,
      (n) => n > 0,
    );
    // The consumer waits on the database, probing it, and stores nothing meanwhile.
    await waitFor(
      async () => pings,
      (n) => n >= 3,
    );
    expect([...stored]).toEqual(['before']);

    down = false;
    await waitFor(
      async () => during.filter((p) => stored.has(p)).length,
      (n) => n === during.length,
      15_000,
    );
    await pub.publishAsync(topic, 'after', { qos: 1 });
    await waitFor(
      async () => stored.has('after'),
      (v) => v,
    );
    expect(consumer.connected).toBe(true);
  } finally {
    await pub.endAsync(true);
    await consumer.stop();
    await directory.stop();
  }
}, 30_000);

it('stops promptly while waiting for a database that does not come back', async () => {
  const controller = new AbortController();
  const waiting = waitUntilAvailable(() => Promise.reject(new Error('down')), controller.signal, 10_000);
  controller.abort();
  await expect(waiting).resolves.toBeUndefined();
});
