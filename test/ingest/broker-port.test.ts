/**
 * Item 9 of issue 9: the embedded broker's port gives way when it was not chosen. With
 * TAGTRAIL_MQTT_PORT unset and the default port taken (a local Mosquitto), the broker takes
 * a free port, the start-up lines say so and the readers page's endpoint shows the real
 * address; a port set explicitly stays strict.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueSessionToken } from '../../src/cli/session-commands.js';
import { DEFAULT_MQTT_PORT } from '../../src/config.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import type { EmbeddedBroker } from '../../src/ingest/broker.js';
import { describeBroker, externalBrokerAddress, startBrokerOnPort } from '../../src/ingest/broker-port.js';
import { brokerView } from '../../src/ingest/internal-routes/broker.js';
import { createServices } from '../../src/services.js';
import { buildIfStale, childEnv, MAIN, run, type ServiceProcess, spawnService } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

function listen(port: number): Promise<Server | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' ? resolve(null) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
const close = (server: Server | null | undefined) =>
  new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
const portOf = (server: Server) => (server.address() as { port: number }).port;

/**
 * Sends an MQTT 3.1.1 CONNECT and resolves with the CONNACK's return code: proof that an
 * MQTT broker answers on the port, whatever it makes of an anonymous client.
 */
function connack(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const id = Buffer.from('tagtrail-port-probe');
    const body = Buffer.concat([
      Buffer.from([0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3c]),
      Buffer.from([id.length >> 8, id.length & 0xff]),
      id,
    ]);
    const socket = new Socket();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no CONNACK within 10 s'));
    }, 10_000);
    let received = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4) return;
      clearTimeout(timer);
      socket.destroy();
      if (received[0] !== 0x20) reject(new Error(`not a CONNACK: ${received.toString('hex')}`));
      else resolve(received[3] as number);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.connect(port, '127.0.0.1', () =>
      socket.write(Buffer.concat([Buffer.from([0x10, body.length]), body])),
    );
  });
}

describe('choosing the embedded broker port', () => {
  const brokers: EmbeddedBroker[] = [];
  let taken: Server;
  beforeAll(async () => {
    taken = (await listen(0)) as Server;
  });
  afterAll(async () => {
    for (const b of brokers) await b.stop();
    await close(taken);
  });

  it('takes a free port when the port was not set and the default one is taken, and says so', async () => {
    const placed = await startBrokerOnPort({ host: '127.0.0.1', defaultPort: portOf(taken) });
    brokers.push(placed.broker);
    expect(placed.broker.port).not.toBe(portOf(taken));
    expect(placed.address).toEqual({
      url: `mqtt://127.0.0.1:${placed.broker.port}`,
      embedded: true,
      defaultPortTaken: portOf(taken),
    });
    expect(await connack(placed.broker.port)).toBeTypeOf('number');
    expect(describeBroker(placed.address)).toEqual([
      `MQTT broker (embedded) listening on mqtt://127.0.0.1:${placed.broker.port}`,
      `MQTT port ${portOf(taken)} is in use (another MQTT broker?), so the embedded broker took port ${placed.broker.port}; set TAGTRAIL_MQTT_PORT to choose the port`,
    ]);
  });

  it('uses the default port when it is free', async () => {
    const probe = (await listen(0)) as Server;
    const free = portOf(probe);
    await close(probe);
    const placed = await startBrokerOnPort({ host: '127.0.0.1', defaultPort: free });
    brokers.push(placed.broker);
    expect(placed.broker.port).toBe(free);
    expect(placed.address).toEqual({ url: `mqtt://127.0.0.1:${free}`, embedded: true });
    expect(describeBroker(placed.address)).toEqual([
      `MQTT broker (embedded) listening on mqtt://127.0.0.1:${free}`,
    ]);
  });

  it('keeps a port that was set strict: taken, the start fails naming TAGTRAIL_MQTT_PORT', async () => {
    await expect(
      startBrokerOnPort({ host: '127.0.0.1', port: portOf(taken), defaultPort: portOf(taken) }),
    ).rejects.toThrow(`port ${portOf(taken)} is in use; set TAGTRAIL_MQTT_PORT to another port`);
  });

  it('shows an external broker without its credentials', () => {
    const address = externalBrokerAddress('mqtts://ingest:s3cret@broker.example:8883');
    expect(address).toEqual({ url: 'mqtts://broker.example:8883', embedded: false });
    expect(describeBroker(address)).toEqual([
      'MQTT: consuming reader messages from mqtts://broker.example:8883 (MQTT_URL)',
    ]);
    expect(describeBroker(address, false)).toEqual([
      'MQTT: not consuming reader messages from mqtts://broker.example:8883 (TAGTRAIL_MQTT_CONSUME=false): the instances that consume store them',
    ]);
  });

  it('names a broker bound to every interface by the host the page was reached at', () => {
    expect(brokerView({ url: 'mqtt://0.0.0.0:1884', embedded: true }, 'site.example')).toEqual({
      url: 'mqtt://site.example:1884',
      host: 'site.example',
      port: 1884,
      embedded: true,
      tls: null,
    });
    expect(brokerView({ url: 'mqtt://127.0.0.1:41234', embedded: true }, 'site.example')).toMatchObject({
      url: 'mqtt://127.0.0.1:41234',
      port: 41234,
    });
    expect(brokerView({ url: 'mqtt://broker.example', embedded: false }, 'site.example')).toEqual({
      url: 'mqtt://broker.example',
      host: 'broker.example',
      port: 1883,
      embedded: false,
      tls: null,
    });
    // The MQTTS listener beside the plain one, its wildcard host named the same way.
    expect(
      brokerView(
        { url: 'mqtt://0.0.0.0:1883', tlsUrl: 'mqtts://0.0.0.0:8883', embedded: true },
        'site.example',
      ).tls,
    ).toEqual({ url: 'mqtts://site.example:8883', host: 'site.example', port: 8883 });
  });

  it('gives way on a taken port only: another listen error fails the start', async () => {
    // Not an address of this machine: EADDRNOTAVAIL, which no other port would cure.
    await expect(startBrokerOnPort({ host: '203.0.113.1' })).rejects.toThrow(/EADDRNOTAVAIL/);
  });
});

describe('`tagtrail serve` with the default MQTT port taken (compiled, its own process)', () => {
  let database: TestDatabase;
  let dataDir: string;
  /** Port 1883 held by this test when nothing else holds it (on this machine type Mosquitto does). */
  let holder: Server | null = null;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tagtrail-broker-port-'));
    [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
    holder = await listen(DEFAULT_MQTT_PORT);
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await close(holder);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const env = () => ({
    DATABASE_URL: database.url,
    PORT: '0',
    HOST: '127.0.0.1',
    TAGTRAIL_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  });

  it('starts on another port, prints the broker address, and the readers page endpoint shows it', async () => {
    service = await spawnService(env());
    const lines = service.stderr().trim().split('\n');
    const match = /^MQTT broker \(embedded\) listening on mqtt:\/\/127\.0\.0\.1:(\d+)$/.exec(lines[0] ?? '');
    expect(match, service.stderr()).not.toBeNull();
    const port = Number(match?.[1]);
    expect(port).not.toBe(DEFAULT_MQTT_PORT);
    expect(lines[1]).toBe(
      `MQTT port ${DEFAULT_MQTT_PORT} is in use (another MQTT broker?), so the embedded broker took port ${port}; set TAGTRAIL_MQTT_PORT to choose the port`,
    );
    expect(lines[2]).toBe(`tagtrail listening on ${service.url}`);
    expect(await connack(port)).toBeTypeOf('number');

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
    try {
      const org = await services.organizations.create('Broker Port Org');
      const session = await issueSessionToken(services, org.id);
      const res = await fetch(`${service.url}/internal/broker`, {
        headers: { cookie: `tagtrail_session=${session.token}` },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        data: { url: `mqtt://127.0.0.1:${port}`, host: '127.0.0.1', port, embedded: true, tls: null },
      });
    } finally {
      await services.close();
    }
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });

  it('fails with exit 1 and a message naming TAGTRAIL_MQTT_PORT when that port is set and taken', async () => {
    const result = await run(
      process.execPath,
      [MAIN, 'serve'],
      childEnv({ ...env(), TAGTRAIL_MQTT_PORT: String(DEFAULT_MQTT_PORT) }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `tagtrail: port ${DEFAULT_MQTT_PORT} is in use; set TAGTRAIL_MQTT_PORT to another port`,
    );
  });
});
