/**
 * The embedded broker's connection bounds (src/ingest/connection-gate.ts): connections in
 * all and from one address are bounded, and one that never sends CONNECT is closed after
 * the connect timeout. Each broker here has small limits so the test opens few sockets.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { generate } from 'mqtt-packet';
import { afterEach, describe, expect, it } from 'vitest';
import { type EmbeddedBroker, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { BrokerAccess } from '../../src/ingest/broker-access.js';
import type { BrokerConnectionLimits } from '../../src/ingest/connection-gate.js';
import { createTestDatabase } from '../helpers/database.js';
import { startTestService } from '../helpers/service.js';
import { closesWithin } from '../helpers/socket-close.js';

let broker: EmbeddedBroker | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await broker?.stop();
  broker = undefined;
});

async function brokerWith(connectionLimits: Partial<BrokerConnectionLimits>): Promise<EmbeddedBroker> {
  broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0, connectionLimits });
  return broker;
}

/** A TCP connection that sends nothing, from `localAddress` (any of 127/8 is this machine). */
function silent(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.once('error', reject);
    socket.on('error', () => undefined);
    sockets.push(socket);
  });
}

describe('connection bounds', () => {
  it('closes a connection from an address that already holds perAddress of them', async () => {
    const { port } = await brokerWith({ perAddress: 2, total: 100 });
    const first = await silent(port);
    const second = await silent(port);
    expect(await closesWithin(await silent(port), 1_000)).toBe(true);
    // Another address is not held back by this one.
    expect(await closesWithin(await silent(port, '127.0.0.2'), 500)).toBe(false);
    expect(first.destroyed || second.destroyed).toBe(false);
    // A slot freed is a slot again.
    first.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await closesWithin(await silent(port), 500)).toBe(false);
  });

  it('closes a connection beyond the total, whatever its address', async () => {
    const { port } = await brokerWith({ perAddress: 10, total: 3 });
    await silent(port, '127.0.0.1');
    await silent(port, '127.0.0.2');
    await silent(port, '127.0.0.3');
    expect(await closesWithin(await silent(port, '127.0.0.4'), 1_000)).toBe(true);
  });

  it('closes a connection that sends no CONNECT within the connect timeout', async () => {
    const { port } = await brokerWith({ connectTimeoutMs: 300 });
    expect(await closesWithin(await silent(port), 2_000)).toBe(true);
  });

  it('closes, unanswered, a connection whose login is not answered within the connect timeout', async () => {
    // Access whose readers are never loaded (the service starting while its database is
    // unreachable): a reader's login waits for them.
    broker = await startEmbeddedBroker({
      host: '127.0.0.1',
      port: 0,
      access: new BrokerAccess(),
      connectionLimits: { connectTimeoutMs: 300 },
    });
    const socket = await silent(broker.port);
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.write(
      generate({
        cmd: 'connect',
        protocolId: 'MQTT',
        protocolVersion: 4,
        clean: true,
        keepalive: 0,
        clientId: 'reader-1',
        username: 'reader-1',
        password: Buffer.from('password'),
      }),
    );
    expect(await closesWithin(socket, 3_000)).toBe(true);
    // Closed, not refused with a CONNACK: the reader reconnects later instead of giving up.
    expect(Buffer.concat(received)).toEqual(Buffer.alloc(0));
  });
});

describe('the service', () => {
  it('bounds its broker by TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS', async () => {
    const database = await createTestDatabase();
    const running = await startTestService({
      DATABASE_URL: database.url,
      TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS: '1',
    });
    try {
      const port = Number(new URL(running.mqttUrl).port);
      expect(await closesWithin(await silent(port), 300)).toBe(false);
      expect(await closesWithin(await silent(port), 1_000)).toBe(true);
    } finally {
      for (const socket of sockets.splice(0)) socket.destroy();
      await running.stop();
      await database.drop();
    }
  });
});
