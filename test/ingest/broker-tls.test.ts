/**
 * The embedded broker's MQTTS listener (TAGTRAIL_MQTT_TLS_CERT/KEY): a reader logs in and
 * publishes over TLS end to end, with a self-signed certificate made by the openssl CLI.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { RunningService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { startTestService } from '../helpers/service.js';
import { fingerprintOf, selfSignedCertificate, servedFingerprint } from '../helpers/tls-certs.js';
import { genericJson, ingestFixture, unique } from './helpers.js';

let dir: string;
let cert: string;
let key: string;
let t: TestApp;
let running: RunningService;
const clients: MqttClient[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-mqtts-'));
  ({ cert, key } = selfSignedCertificate(dir, 'localhost'));
  t = await buildTestApp();
  running = await startTestService({
    TAGTRAIL_MQTTS_PORT: '0',
    TAGTRAIL_MQTT_TLS_CERT: cert,
    TAGTRAIL_MQTT_TLS_KEY: key,
    DATABASE_URL: t.database.url,
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
  await running?.stop();
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const tlsUrl = () => running.broker.tlsUrl!;

/**
 * A reader of a new fixture logs in over TLS, trusting the certificate now in `cert`, and
 * publishes one read: it is stored.
 */
async function publishesOverTls(f: Awaited<ReturnType<typeof ingestFixture>>, location: number, tag: string) {
  const { reader, topic, mqtt } = await f.reader('generic-json', [[null, location]]);
  const client = await connectAsync(
    tlsUrl(),
    {
      protocolVersion: 4,
      reconnectPeriod: 0,
      clientId: `${mqtt.username}-tls`,
      username: mqtt.username,
      password: mqtt.password,
      ca: await readFile(cert),
      rejectUnauthorized: true,
    },
    false,
  );
  clients.push(client);
  const message = genericJson([[tag, 1, null]]);
  await client.publishAsync(topic, message, { qos: 1 });
  expect((await f.rawMessages(reader.id)).map((r) => r.payload)).toEqual([message]);
}

describe('the MQTTS listener', () => {
  it('stores a reader message sent over TLS, checked against the certificate as CA', async () => {
    expect(tlsUrl()).toMatch(/^mqtts:\/\/127\.0\.0\.1:\d+$/);
    const f = await ingestFixture(t);
    const dock = await f.location();
    await publishesOverTls(f, dock, 'E2000000000000000000A7A7');
  });

  it('refuses a client that does not trust the certificate, and anonymous clients over TLS', async () => {
    const untrusted = await connectAsync(
      tlsUrl(),
      { reconnectPeriod: 0, clientId: unique('x'), rejectUnauthorized: true, connectTimeout: 10_000 },
      false,
    ).then(
      (c) => {
        clients.push(c);
        return undefined;
      },
      (err: Error) => err,
    );
    expect(untrusted?.message).toMatch(/self[- ]signed/i);
    const anonymous = await connectAsync(
      tlsUrl(),
      { reconnectPeriod: 0, clientId: unique('x'), ca: await readFile(cert), connectTimeout: 10_000 },
      false,
    ).then(
      (c) => {
        clients.push(c);
        return undefined;
      },
      (err: Error & { code?: number }) => err,
    );
    expect(anonymous?.code).toBe(5);
  });
});

describe('renewing the MQTTS certificate', () => {
  it('serves the renewed pair to readers that connect from then on, without a restart', async () => {
    const port = Number(new URL(tlsUrl()).port);
    const before = await servedFingerprint(port);
    expect(before).toBe(fingerprintOf(cert));
    selfSignedCertificate(dir, 'renewed', { cert, key });
    expect(running.reloadTls()).toEqual([{ listener: 'mqtts', outcome: 'reloaded' }]);
    expect(await servedFingerprint(port)).toBe(fingerprintOf(cert));
    expect(fingerprintOf(cert)).not.toBe(before);

    const f = await ingestFixture(t);
    await publishesOverTls(f, await f.location(), 'E2000000000000000000A7A8');
  });
});

describe('the TLS settings', () => {
  it('are both or neither, and must be a readable PEM certificate and key', async () => {
    expect(() => loadConfig({ TAGTRAIL_MQTT_TLS_CERT: cert })).toThrow(/must be set together/);
    expect(() =>
      loadConfig({ TAGTRAIL_MQTT_TLS_CERT: cert, TAGTRAIL_MQTT_TLS_KEY: join(dir, 'none.pem') }),
    ).toThrow(ConfigError);
    const junk = join(dir, 'junk.pem');
    await writeFile(junk, 'not a key');
    expect(() => loadConfig({ TAGTRAIL_MQTT_TLS_CERT: cert, TAGTRAIL_MQTT_TLS_KEY: junk })).toThrow(
      /not a PEM certificate and its key/,
    );
    expect(
      loadConfig({ TAGTRAIL_MQTT_TLS_CERT: cert, TAGTRAIL_MQTT_TLS_KEY: key }).mqttTls?.cert,
    ).toBeInstanceOf(Buffer);
  });
});
