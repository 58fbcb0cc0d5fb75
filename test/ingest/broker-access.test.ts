/**
 * Access control of the embedded broker (docs/operations.md, "Reader path security"):
 * every client logs in, a reader publishes only to its own topic and subscribes to
 * nothing else, rotated and revoked credentials stop working at once.
 */
import { connectAsync, type IClientOptions, type MqttClient, connect as mqttConnect } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import type { MqttCredentials } from '../../src/ingest/readers-service.js';
import type { RunningService } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { startTestService } from '../helpers/service.js';
import { genericJson, type IngestFixture, ingestFixture, unique, waitFor } from './helpers.js';

let t: TestApp;
let running: RunningService;
let f: IngestFixture;
const clients: MqttClient[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  running = await startTestService({ DATABASE_URL: t.database.url });
  f = await ingestFixture(t);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
  await running?.stop();
  await t?.close();
});

/** Connects once (no retries); resolves with the client or rejects with the CONNACK's error. */
async function connect(options: IClientOptions): Promise<MqttClient> {
  const client = await connectAsync(
    running.mqttUrl,
    { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 10_000, ...options },
    false,
  );
  clients.push(client);
  return client;
}

/** The CONNACK return code of a refused connection. */
async function refusal(options: IClientOptions): Promise<number> {
  const error = await connect(options).then(
    () => undefined,
    (err: Error & { code?: number }) => err,
  );
  expect(error, 'the broker accepted the connection').toBeDefined();
  return error!.code!;
}

const asReader = (login: MqttCredentials, suffix = unique('c')) => ({
  clientId: `${login.username}-${suffix}`,
  username: login.username,
  password: login.password,
});

const closed = (client: MqttClient) =>
  new Promise<void>((resolve) => {
    if (client.disconnected || !client.connected) resolve();
    client.once('close', () => resolve());
  });

/** The SUBACK's return codes (mqtt.js rejects when one is 0x80, with the packet attached). */
async function grants(client: MqttClient, filters: string[]): Promise<number[]> {
  try {
    return (await client.subscribeAsync(filters, { qos: 1 })).map((g) => g.qos);
  } catch (err) {
    const packet = (err as { packet?: { granted?: number[] } }).packet;
    if (!packet?.granted) throw err;
    return packet.granted;
  }
}

async function storedPayloads(readerId: number): Promise<string[]> {
  return (await f.rawMessages(readerId)).map((r) => r.payload);
}

describe('logging in', () => {
  it('refuses an anonymous client: return code 5, not authorized', async () => {
    expect(await refusal({ clientId: unique('anonymous') })).toBe(5);
  });

  it('refuses a wrong password, an unknown reader and a made-up user: return code 4', async () => {
    const { mqtt } = await f.reader('generic-json', []);
    const other = await f.reader('generic-json', []);
    expect(await refusal({ ...asReader(mqtt), password: 'not-the-password' })).toBe(4);
    // Another reader's password does not open this one.
    expect(await refusal({ ...asReader(mqtt), password: other.mqtt.password })).toBe(4);
    expect(
      await refusal({ clientId: 'reader-2147483000', username: 'reader-2147483000', password: 'x' }),
    ).toBe(4);
    expect(await refusal({ clientId: 'admin', username: 'admin', password: 'admin' })).toBe(4);
    expect(await refusal({ ...asReader(mqtt), username: 'tagtrail-service' })).toBe(4);
  });

  it("refuses a reader taking another reader's client id: return code 2", async () => {
    const { mqtt } = await f.reader('generic-json', []);
    const other = await f.reader('generic-json', []);
    expect(await refusal({ ...asReader(mqtt), clientId: other.mqtt.username })).toBe(2);
    expect(await refusal({ ...asReader(mqtt), clientId: `${mqtt.username}0` })).toBe(2);
    // Its user name, alone or with a suffix, is fine.
    await connect({ ...asReader(mqtt), clientId: mqtt.username });
  });

  it('accepts a reader registered a moment ago', async () => {
    const { mqtt } = await f.reader('generic-json', []);
    const client = await connect(asReader(mqtt));
    expect(client.connected).toBe(true);
  });
});

describe('publishing', () => {
  it("stores a reader's message on its own topic", async () => {
    const dock = await f.location();
    const { reader, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    const client = await connect(asReader(mqtt));
    const message = genericJson([['E2000000000000000000F001', 1, null]]);
    await client.publishAsync(topic, message, { qos: 1 });
    expect(await storedPayloads(reader.id)).toEqual([message]);
  });

  it("refuses a message on another reader's topic: connection closed, nothing stored", async () => {
    const dock = await f.location();
    const victim = await f.reader('generic-json', [[null, dock]]);
    const { reader, mqtt } = await f.reader('generic-json', [[null, dock]]);
    // The victim may belong to another organization: the topic alone decided where reads went.
    const otherOrg = await ingestFixture(t);
    const foreign = await otherOrg.reader('generic-json', []);
    for (const target of [victim, foreign]) {
      const intruder = await connect(asReader(mqtt));
      const gone = closed(intruder);
      intruder.publish(target.topic, genericJson([['E2000000000000000000F0FF', 1, null]]), { qos: 1 });
      await gone;
    }
    // The victim's own message after the forged ones is the only one stored.
    const own = genericJson([['E2000000000000000000F002', 1, null]]);
    await (await connect(asReader(victim.mqtt))).publishAsync(victim.topic, own, { qos: 1 });
    expect(await storedPayloads(victim.reader.id)).toEqual([own]);
    expect(await storedPayloads(foreign.reader.id)).toEqual([]);
    expect(await storedPayloads(reader.id)).toEqual([]);
  });
});

describe('retained and will messages', () => {
  /** What a subscriber to `topic` gets within a second (a retained message comes at once). */
  async function heardOn(client: MqttClient, topic: string): Promise<string[]> {
    const heard: string[] = [];
    client.on('message', (_topic, payload) => heard.push(payload.toString()));
    expect(await grants(client, [topic])).toEqual([1]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return heard;
  }

  it("keeps no retained message of a reader: its topic's next owner, of another organization, hears nothing of it", async () => {
    const { reader, topic, mqtt } = await f.reader('generic-json', []);
    const planted = genericJson([['E2000000000000000000F0CC', 1, null]]);
    const client = await connect(asReader(mqtt));
    await client.publishAsync(topic, planted, { qos: 1, retain: true });
    // A will with the retain flag, published as the connection drops.
    const willing = await connect({
      ...asReader(mqtt),
      will: { topic, payload: Buffer.from(planted), qos: 1, retain: true },
    });
    const willGone = closed(willing);
    willing.stream.destroy();
    await willGone;
    await waitFor(
      () => storedPayloads(reader.id),
      (payloads) => payloads.length === 2,
    );
    // The reader goes; another organization's reader is given its topic.
    const gone = closed(client);
    await t.services.readers.delete(cliCaller(f.orgId), reader.id);
    await gone;
    const otherOrg = await ingestFixture(t);
    const taker = await t.services.readers.create(cliCaller(otherOrg.orgId), {
      family: 'generic-json',
      identity: unique('reader'),
      topic,
    });
    const listener = await connect(asReader(taker.mqtt));
    expect(await heardOn(listener, topic)).toEqual([]);
  });
});

describe('sessions', () => {
  /** Logs in with a persistent session; resolves with the CONNACK's session-present flag. */
  async function sessionPresent(login: MqttCredentials, clientId: string, topic: string): Promise<boolean> {
    const client = mqttConnect(running.mqttUrl, {
      ...asReader(login),
      clientId,
      clean: false,
      protocolVersion: 4,
      reconnectPeriod: 0,
    });
    clients.push(client);
    const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('error', reject);
    });
    // Something for a persistent session to keep (aedes reports a session by its subscriptions).
    expect(await grants(client, [topic])).toEqual([1]);
    await client.endAsync();
    return connack.sessionPresent;
  }

  it('gives a reader a clean session even when it asks for a persistent one', async () => {
    const { mqtt, topic } = await f.reader('generic-json', []);
    const clientId = `${mqtt.username}-${unique('s')}`;
    expect(await sessionPresent(mqtt, clientId, topic)).toBe(false);
    // A persistent session would be there on the second login, with what it held.
    expect(await sessionPresent(mqtt, clientId, topic)).toBe(false);
  });
});

describe('subscribing', () => {
  it("refuses '#', '+' filters, $SYS and other readers' topics; allows its own topic", async () => {
    const { topic, mqtt } = await f.reader('generic-json', []);
    const other = await f.reader('generic-json', []);
    const client = await connect(asReader(mqtt));
    const filters = [
      '#',
      '+/#',
      'tagtrail-test/+/events',
      other.topic,
      `$share/g/${other.topic}`,
      '$SYS/#',
      `${topic}/#`,
    ];
    expect(await grants(client, filters)).toEqual(filters.map(() => 128));
    expect(await grants(client, [topic])).toEqual([1]);
    // A refused filter does not cost the connection.
    expect(client.connected).toBe(true);
  });

  it("lets the service's own login subscribe to every reader topic", async () => {
    const { topic, mqtt } = await f.reader('generic-json', []);
    const service = await connect({ clientId: unique('tagtrail-service'), ...running.brokerLogin! });
    const granted = await service.subscribeAsync('tagtrail-test/#', { qos: 1 });
    expect(granted[0]?.qos).toBe(1);
    const received = new Promise<string>((resolve) => service.once('message', (t) => resolve(t)));
    await (await connect(asReader(mqtt))).publishAsync(topic, genericJson([]), { qos: 1 });
    expect(await received).toBe(topic);
  });
});

describe('rotating and revoking', () => {
  it('revoking disconnects the live connection and refuses the next login', async () => {
    const { reader, mqtt } = await f.reader('generic-json', []);
    const client = await connect(asReader(mqtt));
    const gone = closed(client);
    await t.services.readers.revokeMqttCredentials(cliCaller(f.orgId), reader.id);
    await gone;
    expect(await refusal(asReader(mqtt))).toBe(4);
    expect((await t.services.readers.get(f.orgId, reader.id)).mqtt).toBe(false);
  });

  it('rotating disconnects the old login; only the new password works', async () => {
    const dock = await f.location();
    const { reader, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    const client = await connect(asReader(mqtt));
    const gone = closed(client);
    const rotated = await t.services.readers.rotateMqttCredentials(cliCaller(f.orgId), reader.id);
    expect(rotated.mqtt.username).toBe(mqtt.username);
    expect(rotated.mqtt.password).not.toBe(mqtt.password);
    await gone;
    expect(await refusal(asReader(mqtt))).toBe(4);
    const renewed = await connect(asReader(rotated.mqtt));
    const message = genericJson([['E2000000000000000000F003', 1, null]]);
    await renewed.publishAsync(topic, message, { qos: 1 });
    expect(await storedPayloads(reader.id)).toEqual([message]);
    // Deleting the reader closes its connection too.
    const deleted = closed(renewed);
    await t.services.readers.delete(cliCaller(f.orgId), reader.id);
    await deleted;
    await waitFor(
      async () => refusal(asReader(rotated.mqtt)),
      (code) => code === 4,
    );
  });
});

describe('changing the topic', () => {
  it("closes the reader's connection: its old topic, given to another organization's reader, is not its", async () => {
    const dock = await f.location();
    const { reader, topic: old, mqtt } = await f.reader('generic-json', [[null, dock]]);
    const client = await connect(asReader(mqtt));
    const gone = closed(client);
    const moved = `${old}-moved`;
    await t.services.readers.update(f.orgId, reader.id, { topic: moved });
    // Another organization's reader takes the freed topic at once, as the docs promise.
    const otherOrg = await ingestFixture(t);
    const tag = 'E2000000000000000000F0AA';
    const asset = await otherOrg.asset(tag);
    const bay = await otherOrg.location();
    const { reader: taker } = await t.services.readers.create(cliCaller(otherOrg.orgId), {
      family: 'generic-json',
      identity: unique('reader'),
      topic: old,
    });
    await t.services.readers.addScanPoint(cliCaller(otherOrg.orgId), taker.id, {
      antenna: null,
      locationId: bay,
    });
    await running.ingest.serving(old);
    // The old connection tries its old topic (refused, or already closed: never acknowledged).
    const answer = await Promise.race([
      gone.then(() => 'closed'),
      client.publishAsync(old, genericJson([[tag, 1, null]]), { qos: 1 }).then(
        () => 'acknowledged',
        () => 'refused',
      ),
    ]);
    expect(answer).not.toBe('acknowledged');
    await gone;
    expect(await storedPayloads(taker.id)).toEqual([]);
    expect(await otherOrg.readerCounters(taker.id)).toEqual({ good: 0, bad: 0, unknown: 0 });
    expect(await otherOrg.currentLocation(asset)).toBeNull();
    // Logged in again, the reader publishes to its new topic, and only there.
    const renewed = await connect(asReader(mqtt));
    const message = genericJson([['E2000000000000000000F0AB', 1, null]]);
    await renewed.publishAsync(moved, message, { qos: 1 });
    expect(await storedPayloads(reader.id)).toEqual([message]);
    const refused = closed(renewed);
    renewed.publish(old, genericJson([[tag, 1, null]]), { qos: 1 });
    await refused;
    expect(await storedPayloads(taker.id)).toEqual([]);
  });

  it('refuses a subscription to the old topic after logging in again', async () => {
    const { reader, topic: old, mqtt } = await f.reader('generic-json', []);
    const client = await connect(asReader(mqtt));
    expect(await grants(client, [old])).toEqual([1]);
    const gone = closed(client);
    await t.services.readers.update(f.orgId, reader.id, { topic: `${old}-moved` });
    // Closing drops the live subscription, which would hear whoever publishes there next.
    await gone;
    const renewed = await connect(asReader(mqtt));
    expect(await grants(renewed, [old, `${old}-moved`])).toEqual([128, 1]);
  });
});
