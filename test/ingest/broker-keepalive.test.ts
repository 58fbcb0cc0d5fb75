/**
 * TCP keepalive on the embedded broker's accepted connections (plain and TLS), so a reader
 * that logged in with MQTT keepalive 0 and then died without a FIN (power cut, cellular
 * drop) does not hold its connection slots for ever: the kernel probes it and closes it.
 *
 * Observed where the kernel shows it: Linux lists every TCP socket in /proc/net/tcp with
 * the timer armed on it (2: keepalive) and when that fires, in clock ticks. An idle
 * connection without keepalive has no timer armed at all.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  BROKER_TCP_KEEPALIVE_MS,
  type EmbeddedBroker,
  startEmbeddedBroker,
} from '../../src/ingest/broker.js';
import { selfSignedCertificate } from '../helpers/tls-certs.js';

/** /proc/net/tcp's `tr` of a socket whose keepalive timer is pending. */
const KEEPALIVE_TIMER = 2;
/** USER_HZ, the unit of /proc/net/tcp's `tm->when` (100 on every Linux architecture in use). */
const TICKS_PER_SECOND = 100;

/** The timer of the TCP socket on 127.0.0.1:`localPort` connected to 127.0.0.1:`remotePort`. */
async function timerOf(localPort: number, remotePort: number): Promise<{ timer: number; ticks: number }> {
  const hex = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const table = await readFile('/proc/net/tcp', 'utf8');
  for (const line of table.split('\n').slice(1)) {
    const [, local, remote, , , timer] = line.trim().split(/\s+/);
    if (local !== hex(localPort) || remote !== hex(remotePort) || !timer) continue;
    const [tr = '', when = ''] = timer.split(':');
    return { timer: Number.parseInt(tr, 16), ticks: Number.parseInt(when, 16) };
  }
  throw new Error(`no socket 127.0.0.1:${localPort} <-> 127.0.0.1:${remotePort} in /proc/net/tcp`);
}

/** The broker's side of the connection whose client end is on `clientPort` probes its peer. */
async function expectKeepalive(brokerPort: number, clientPort: number): Promise<void> {
  await vi.waitFor(async () => expect((await timerOf(brokerPort, clientPort)).timer).toBe(KEEPALIVE_TIMER), {
    timeout: 2_000,
  });
  // Armed for the broker's delay, not the kernel's default of two hours.
  expect((await timerOf(brokerPort, clientPort)).ticks).toBeLessThanOrEqual(
    (BROKER_TCP_KEEPALIVE_MS / 1000) * TICKS_PER_SECOND,
  );
}

describe.skipIf(process.platform !== 'linux')('TCP keepalive on the broker connections', () => {
  let dir: string;
  let tls: { cert: Buffer; key: Buffer };
  let broker: EmbeddedBroker;
  const clients: MqttClient[] = [];
  const sockets: TLSSocket[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-keepalive-'));
    const files = selfSignedCertificate(dir, 'localhost');
    tls = { cert: await readFile(files.cert), key: await readFile(files.key) };
    broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0, tls: { ...tls, port: 0 } });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.endAsync(true).catch(() => undefined)));
    for (const socket of sockets.splice(0)) socket.destroy();
  });
  afterAll(async () => {
    await broker?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is on for a client logged in with MQTT keepalive 0 on the plain listener', async () => {
    const client = await connectAsync(broker.url, {
      protocolVersion: 4,
      reconnectPeriod: 0,
      keepalive: 0,
      clientId: 'keepalive-zero',
    });
    clients.push(client);
    const clientPort = (client.stream as unknown as { localPort: number }).localPort;
    await expectKeepalive(broker.port, clientPort);
  });

  it('is on for a connection on the TLS listener', async () => {
    const tlsPort = Number(new URL(broker.tlsUrl!).port);
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const s = connectTls({ port: tlsPort, host: '127.0.0.1', ca: tls.cert, servername: 'localhost' }, () =>
        resolve(s),
      );
      s.once('error', reject);
    });
    sockets.push(socket);
    await expectKeepalive(tlsPort, socket.localPort!);
  });
});
