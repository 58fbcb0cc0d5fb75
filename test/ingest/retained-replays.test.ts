/**
 * A retained message on a reader's topic is replayed by the broker to every new
 * subscription: on an external broker that retains what readers send, the consumer would
 * store the same old message again at each of its reconnects. It drops the replay and
 * stores what arrives live. On the embedded broker used as a plain MQTT broker and, with
 * TEST_MQTT_URL, on the machine's Mosquitto.
 */
import type { MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { silentLogger } from '../../src/ingest/limiter.js';
import { MqttConsumer } from '../../src/ingest/mqtt-consumer.js';
import { directoryOf, fakeIngest } from '../helpers/fake-ingest.js';
import { publisher, unique, waitFor } from './helpers.js';

let embedded: EmbeddedBroker;
beforeAll(async () => {
  embedded = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
});
afterAll(() => embedded?.stop());

const brokers: Array<[string, () => string]> = [['the embedded broker', () => embedded.url]];
const external = inject('mqttUrl');
if (external) brokers.push(['the machine broker (TEST_MQTT_URL)', () => external]);

describe.each(brokers)('retained messages on %s', (_name, urlOf) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  const reader = async (): Promise<MqttClient> => {
    const c = await publisher(urlOf());
    cleanups.push(() => c.endAsync(true));
    return c;
  };

  it('are acknowledged and dropped; live messages are stored', async () => {
    const topic = unique('retained');
    const pub = await reader();
    await pub.publishAsync(topic, '{"tag":"E2OLD"}', { qos: 1, retain: true });
    // Cleared at the end so that nothing is left on the broker: an empty retained message.
    cleanups.push(async () => {
      const again = await publisher(urlOf());
      await again.publishAsync(topic, '', { qos: 1, retain: true });
      await again.endAsync(true);
    });

    const ingest = fakeIngest();
    const directory = await directoryOf([topic]);
    const consumer = new MqttConsumer({
      url: urlOf(),
      clientId: unique('tagtrail-retained-test'),
      directory,
      ingest,
      logger: silentLogger,
      retryDelaysMs: [10],
      clientOptions: { reconnectPeriod: 100 },
    });
    consumer.start();
    await consumer.ready();
    cleanups.push(async () => {
      await consumer.stop();
      await directory.stop();
    });
    await waitFor(
      async () => consumer.stats.retainedDropped,
      (n) => n === 1,
    );

    await pub.publishAsync(topic, '{"tag":"E2NEW"}', { qos: 1, retain: true });
    await pub.publishAsync(topic, '{"tag":"E2LIVE"}', { qos: 1 });
    await waitFor(
      async () => ingest.stored.length,
      (n) => n === 2,
    );
    // A retained publish forwarded to a subscription already made arrives without the flag.
    expect(ingest.stored).toEqual(['{"tag":"E2NEW"}', '{"tag":"E2LIVE"}']);
    expect(consumer.stats).toMatchObject({ stored: 2, retainedDropped: 1 });
  });
});
