import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import type { MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { connectMqtt } from '../../src/ingest/mqtt-connection.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestService } from '../helpers/service.js';

const unique = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

/** Subscribes with QoS 1 on one client, publishes QoS 1 from another, returns what arrived. */
async function roundTrip(url: string): Promise<{ topic: string; payload: string; qos: number }> {
  const topic = `tagtrail-test/${unique('t')}/reads`;
  const subscriber = await connectMqtt(url, unique('tagtrail-test-sub'));
  const publisher = await connectMqtt(url, unique('tagtrail-test-pub'));
  try {
    const received = new Promise<{ topic: string; payload: string; qos: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message within 20 s')), 20_000);
      subscriber.on('message', (t, payload, packet) => {
        clearTimeout(timer);
        resolve({ topic: t, payload: payload.toString(), qos: packet.qos });
      });
    });
    const granted = await subscriber.subscribeAsync(topic, { qos: 1 });
    expect(granted[0]?.qos).toBe(1);
    await publisher.publishAsync(topic, JSON.stringify({ epc: 'E280116060000209' }), { qos: 1 });
    return await received;
  } finally {
    await Promise.all([subscriber.endAsync(), publisher.endAsync()]);
  }
}

function listenOnFreePort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address === 'object' && address) resolve({ server, port: address.port });
      else reject(new Error('no address'));
    });
  });
}

describe('embedded broker', () => {
  let broker: EmbeddedBroker;
  beforeAll(async () => {
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => broker?.stop());

  it('binds the port it was given, reporting the real one for port 0', () => {
    expect(broker.port).toBeGreaterThan(0);
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
  });

  it('delivers a QoS 1 message from one client to a subscriber', async () => {
    const message = await roundTrip(broker.url);
    expect(message.topic).toMatch(/^tagtrail-test\/.+\/reads$/);
    expect(JSON.parse(message.payload)).toEqual({ epc: 'E280116060000209' });
    expect(message.qos).toBe(1);
  });

  it('stops with clients still connected and frees its port', async () => {
    const own = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
    const client: MqttClient = await connectMqtt(own.url, unique('tagtrail-test-idle'), {
      reconnectPeriod: 0,
    });
    await own.stop();
    await own.stop(); // idempotent
    const again = await startEmbeddedBroker({ host: '127.0.0.1', port: own.port });
    await again.stop();
    await client.endAsync(true);
  });
});

describe('a taken broker port', () => {
  let taken: { server: Server; port: number };
  beforeAll(async () => {
    taken = await listenOnFreePort();
  });
  afterAll(() => new Promise<void>((resolve) => taken.server.close(() => resolve())));

  it('fails with a message that names TAGTRAIL_MQTT_PORT', async () => {
    await expect(startEmbeddedBroker({ host: '127.0.0.1', port: taken.port })).rejects.toThrow(
      `port ${taken.port} is in use; set TAGTRAIL_MQTT_PORT to another port (or MQTT_URL to use an external broker)`,
    );
  });

  it('makes the service fail to start before it opens the database', async () => {
    await expect(
      startTestService({
        TAGTRAIL_MQTT_PORT: String(taken.port),
        // Never reached: the broker starts first. A closed port makes any attempt fail fast.
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      }),
    ).rejects.toThrow(/TAGTRAIL_MQTT_PORT/);
  });
});

describe('the service with no MQTT_URL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  it('runs the embedded broker on TAGTRAIL_MQTT_PORT and stops it on stop()', async () => {
    const running = await startTestService({ DATABASE_URL: database.url });
    stop = () => running.stop();
    expect(running.mqttUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    // Every client logs in (test/ingest/broker-access.test.ts): here the service's own login.
    const login = running.brokerLogin!;
    const client = await connectMqtt(running.mqttUrl, unique('tagtrail-test-service'), {
      ...login,
      reconnectPeriod: 0,
    });
    const granted = await client.subscribeAsync('tagtrail-test/#', { qos: 1 });
    expect(granted[0]?.qos).toBe(1);
    await client.endAsync();
    await running.stop();
    await expect(
      connectMqtt(running.mqttUrl, unique('after-stop'), { initialTimeoutMs: 2_000 }),
    ).rejects.toThrow();
  });

  it('uses MQTT_URL instead when it is set', async () => {
    const running = await startTestService({
      MQTT_URL: 'mqtt://broker.invalid:1883',
      DATABASE_URL: database.url,
    });
    stop = () => running.stop();
    expect(running.mqttUrl).toBe('mqtt://broker.invalid:1883');
  });
});

const externalUrl = inject('mqttUrl');

describe.skipIf(!externalUrl)('the machine broker (TEST_MQTT_URL)', () => {
  it('delivers a QoS 1 message from one client to a subscriber', async () => {
    const message = await roundTrip(externalUrl as string);
    expect(JSON.parse(message.payload)).toEqual({ epc: 'E280116060000209' });
    expect(message.qos).toBe(1);
  });
});
