/**
 * `tagtrail mosquitto-config` against the machine's Mosquitto binary: a PRIVATE mosquitto
 * (own port, own config in a temporary directory) runs on the generated password and ACL
 * files. Runs wherever /usr/sbin/mosquitto exists; in .ci/run's machine pass
 * (TEST_MQTT_URL set) a missing binary fails instead of skipping.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { mosquittoFiles, writeMosquittoFiles } from '../../src/ingest/mosquitto-config.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ingestFixture, unique, waitFor } from './helpers.js';

const MOSQUITTO = '/usr/sbin/mosquitto';
const machinePass = Boolean(inject('mqttUrl'));
const consumer = { username: 'tagtrail-ingest', password: unique('consumer-password') };

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

describe.skipIf(!existsSync(MOSQUITTO) && !machinePass)('mosquitto-config on a private Mosquitto', () => {
  let t: TestApp;
  let dir: string;
  let port: number;
  let broker: ChildProcess | undefined;
  const clients: MqttClient[] = [];

  const connect = async (options: IClientOptions) => {
    const client = await connectAsync(
      `mqtt://127.0.0.1:${port}`,
      { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 10_000, ...options },
      false,
    );
    clients.push(client);
    return client;
  };
  const refusal = (options: IClientOptions) =>
    connect(options).then(
      () => 0,
      (err: Error & { code?: number }) => err.code ?? -1,
    );

  let f: Awaited<ReturnType<typeof ingestFixture>>;
  let a: Awaited<ReturnType<Awaited<ReturnType<typeof ingestFixture>>['reader']>>;
  let b: Awaited<ReturnType<Awaited<ReturnType<typeof ingestFixture>>['reader']>>;

  beforeAll(async () => {
    if (!existsSync(MOSQUITTO)) throw new Error(`${MOSQUITTO} is missing on a machine with TEST_MQTT_URL`);
    t = await buildTestApp();
    f = await ingestFixture(t);
    a = await f.reader('generic-json', []);
    b = await f.reader('generic-json', []);
    const revoked = await f.reader('generic-json', []);
    await t.services.readers.revokeMqttCredentials(cliCaller(f.orgId), revoked.reader.id);

    dir = await mkdtemp(join(tmpdir(), 'tagtrail-mosquitto-'));
    await writeMosquittoFiles(dir, mosquittoFiles(await t.services.readers.liveTopics(), consumer));
    port = await freePort();
    const conf = join(dir, 'mosquitto.conf');
    await writeFile(
      conf,
      [
        `listener ${port} 127.0.0.1`,
        'allow_anonymous false',
        `password_file ${join(dir, 'passwd')}`,
        `acl_file ${join(dir, 'acl')}`,
        'persistence false',
        // Started as root it would switch to the mosquitto user, who cannot read our files.
        ...(process.getuid?.() === 0 ? ['user root'] : []),
        '',
      ].join('\n'),
    );
    broker = spawn(MOSQUITTO, ['-c', conf], { stdio: 'ignore' });
    await waitFor(
      () => refusal({ clientId: unique('probe') }),
      (code) => code === 5,
      15_000,
    );
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    broker?.kill('SIGTERM');
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('accepts the stored hashes and refuses anonymous, wrong-password and revoked readers', async () => {
    expect(await refusal({ clientId: unique('anon') })).toBe(5);
    expect(
      await refusal({ clientId: a.mqtt.username, username: a.mqtt.username, password: b.mqtt.password }),
    ).toBe(5);
    const revoked = (await t.services.readers.list(f.orgId)).find((r) => !r.mqtt)!;
    expect(
      await refusal({ clientId: unique('r'), username: `reader-${revoked.id}`, password: a.mqtt.password }),
    ).toBe(5);
    expect(
      await refusal({ clientId: a.mqtt.username, username: a.mqtt.username, password: a.mqtt.password }),
    ).toBe(0);
  });

  it("lets a reader publish only to its own topic; the consumer reads every reader's", async () => {
    const service = await connect({ clientId: unique('tagtrail-ingest'), ...consumer });
    const received: string[] = [];
    service.on('message', (topic, payload) => received.push(`${topic} ${payload}`));
    await service.subscribeAsync('#', { qos: 1 });
    const reader = await connect({
      clientId: `${a.mqtt.username}-x`,
      username: a.mqtt.username,
      password: a.mqtt.password,
    });
    // Mosquitto drops a denied PUBLISH silently (MQTT 3.1.1); the next one shows it never arrived.
    await reader.publishAsync(b.topic, 'forged', { qos: 1 });
    await reader.publishAsync(a.topic, 'own', { qos: 1 });
    await waitFor(
      async () => received.length,
      (n) => n >= 1,
    );
    expect(received).toEqual([`${a.topic} own`]);
    // A reader reading '#' gets nothing of the others.
    const snoop: string[] = [];
    reader.on('message', (topic) => snoop.push(topic));
    await reader.subscribeAsync('#', { qos: 1 }).catch(() => undefined);
    const other = await connect({ clientId: `${b.mqtt.username}-y`, ...b.mqtt });
    await other.publishAsync(b.topic, 'theirs', { qos: 1 });
    await waitFor(
      async () => received.length,
      (n) => n >= 2,
    );
    expect(snoop).toEqual([]);
  });
});
