/**
 * The embedded broker's packet size limits (src/ingest/packet-limit.ts): a packet whose
 * remaining length is over the limit closes the connection as soon as its header is read,
 * before its body is buffered; a reader's payload over 1 MiB but under the limit still
 * reaches ingest (which stores it cut, docs/ingest.md).
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connectAsync } from 'mqtt';
import { generate } from 'mqtt-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedBroker, QOS2_AWAITING_RELEASE, startEmbeddedBroker } from '../../src/ingest/broker.js';
import { MQTT_PACKET_LIMITS } from '../../src/ingest/packet-limit.js';
import { closesWithin } from '../helpers/socket-close.js';

let broker: EmbeddedBroker;
const published: Array<{ topic: string; bytes: number }> = [];

beforeAll(async () => {
  broker = await startEmbeddedBroker({
    host: '127.0.0.1',
    port: 0,
    onPublish: (topic, payload, _sender, done) => {
      published.push({ topic, bytes: payload.length });
      done(null);
    },
  });
});
afterAll(() => broker?.stop());

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(broker.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('packet size limits', () => {
  it('closes a connection whose CONNECT claims 256 MiB, before reading its body', async () => {
    const socket = await openSocket();
    socket.on('error', () => undefined);
    // CONNECT, remaining length 268,435,455 (the largest MQTT can say), then some of the body.
    socket.write(Buffer.from([0x10, 0xff, 0xff, 0xff, 0x7f]));
    socket.write(Buffer.alloc(1024, 0x41));
    expect(await closesWithin(socket, 2_000)).toBe(true);
    socket.destroy();
  });

  it('closes a connection whose CONNECT is over 64 KiB', async () => {
    const socket = await openSocket();
    socket.on('error', () => undefined);
    const length = MQTT_PACKET_LIMITS.connect + 1;
    // Remaining length as MQTT's variable byte integer.
    const header = [0x10];
    for (let n = length; ; ) {
      const byte = n % 128;
      n = Math.floor(n / 128);
      header.push(n > 0 ? byte | 0x80 : byte);
      if (n === 0) break;
    }
    socket.write(Buffer.from(header));
    expect(await closesWithin(socket, 2_000)).toBe(true);
    socket.destroy();
  });

  it('takes a 1.5 MiB payload and refuses one over 8 MiB, closing the connection unacknowledged', async () => {
    const client = await connectAsync(broker.url, { protocolVersion: 4, reconnectPeriod: 0 }, false);
    try {
      await client.publishAsync('packet-limit/large', Buffer.alloc(1.5 * 1024 * 1024, 0x20), { qos: 1 });
      expect(published).toContainEqual({ topic: 'packet-limit/large', bytes: 1.5 * 1024 * 1024 });
      const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
      void client
        .publishAsync('packet-limit/huge', Buffer.alloc(MQTT_PACKET_LIMITS.other + 1, 0x20), { qos: 1 })
        .catch(() => undefined);
      await closed;
      expect(published.map((p) => p.topic)).not.toContain('packet-limit/huge');
    } finally {
      await client.endAsync(true);
    }
  });

  it('closes a connection that leaves more QoS 2 messages than QOS2_AWAITING_RELEASE unreleased', async () => {
    const socket = await openSocket();
    socket.on('error', () => undefined);
    // Read (and drop) the PUBRECs, or the socket would never see the broker close it.
    socket.resume();
    socket.write(
      generate({
        cmd: 'connect',
        protocolId: 'MQTT',
        protocolVersion: 4,
        clean: true,
        clientId: 'qos2',
        keepalive: 0,
      }),
    );
    const publish = (messageId: number) =>
      generate({
        cmd: 'publish',
        topic: 'packet-limit/qos2',
        qos: 2,
        messageId,
        payload: Buffer.from('x'),
        dup: false,
        retain: false,
      });
    // Each is kept whole until its PUBREL, which never comes; within the window all are taken.
    for (let id = 1; id <= QOS2_AWAITING_RELEASE; id++) socket.write(publish(id));
    expect(await closesWithin(socket, 1_000)).toBe(false);
    socket.write(publish(QOS2_AWAITING_RELEASE + 1));
    expect(await closesWithin(socket, 2_000)).toBe(true);
  });
});
