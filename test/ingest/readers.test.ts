import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { ApiError } from '../../src/errors.js';
import { verifyMqttPassword } from '../../src/ingest/mqtt-credentials.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ingestFixture, unique } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

const rejects = async (promise: Promise<unknown>, type: string, field?: string, code?: string) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).type).toBe(type);
  if (field) expect((err as ApiError).fields?.[0]).toMatchObject({ field, code });
};
describe('readers service', () => {
  it('creates, lists, gets and soft-deletes readers, freeing the topic and identity', async () => {
    const f = await ingestFixture(t);
    const topic = `site/${unique('dock')}/reads`;
    const { reader, webhookSecret } = await t.services.readers.create(cliCaller(f.orgId), {
      family: 'impinj-r700',
      identity: 'impinj-14-1b-b0',
      topic,
    });
    expect(webhookSecret).toBeNull();
    expect(reader).toMatchObject({
      orgId: f.orgId,
      name: 'impinj-14-1b-b0',
      family: 'impinj-r700',
      topic,
      webhook: false,
      goodReads: 0,
      scanPoints: [],
    });
    expect((await t.services.readers.list(f.orgId)).map((r) => r.id)).toEqual([reader.id]);
    expect(await t.services.readers.get(f.orgId, reader.id)).toMatchObject({ id: reader.id });

    // Topics are unique across organizations, identities within one.
    const other = await ingestFixture(t);
    await rejects(
      t.services.readers.create(cliCaller(other.orgId), { family: 'zebra-fx', identity: 'x', topic }),
      'conflict',
    );
    await rejects(
      t.services.readers.create(cliCaller(f.orgId), {
        family: 'zebra-fx',
        identity: 'impinj-14-1b-b0',
        topic: `${topic}/2`,
      }),
      'conflict',
    );
    // Another organization sees nothing of it.
    await rejects(t.services.readers.get(other.orgId, reader.id), 'not_found');
    await rejects(t.services.readers.delete(cliCaller(other.orgId), reader.id), 'not_found');

    await t.services.readers.delete(cliCaller(f.orgId), reader.id);
    await rejects(t.services.readers.get(f.orgId, reader.id), 'not_found');
    await rejects(t.services.readers.delete(cliCaller(f.orgId), reader.id), 'not_found');
    expect(await t.services.readers.list(f.orgId)).toEqual([]);
    expect((await t.services.readers.liveTopics()).some((x) => x.topic === topic)).toBe(false);
    const again = await t.services.readers.create(cliCaller(other.orgId), {
      family: 'zebra-fx',
      identity: 'x',
      topic,
    });
    expect((await t.services.readers.liveTopics()).find((x) => x.topic === topic)).toEqual({
      id: again.reader.id,
      orgId: other.orgId,
      family: 'zebra-fx',
      topic,
      mqttPasswordHash: expect.stringMatching(/^\$7\$/),
    });
  });

  it('validates family, identity, name and topic', async () => {
    const f = await ingestFixture(t);
    const create = (input: Record<string, unknown>) =>
      t.services.readers.create(cliCaller(f.orgId), {
        family: 'generic-json',
        identity: 'gate-1',
        topic: `t/${unique('x')}`,
        ...input,
      } as never);
    await rejects(create({ family: 'nfc' }), 'validation_error', 'family', 'invalid_value');
    await rejects(create({ identity: '' }), 'validation_error', 'identity', 'required');
    await rejects(create({ identity: ' gate' }), 'validation_error', 'identity', 'invalid_value');
    await rejects(create({ name: 'x'.repeat(256) }), 'validation_error', 'name', 'too_long');
    await rejects(create({ topic: 'site/+/reads' }), 'validation_error', 'topic', 'invalid_value');
    await rejects(create({ topic: 'site/#' }), 'validation_error', 'topic', 'invalid_value');
    await rejects(create({ topic: '$SYS/x' }), 'validation_error', 'topic', 'invalid_value');
    await rejects(create({ topic: 'a\u0000b' }), 'validation_error', 'topic', 'invalid_value');
    await rejects(create({ topic: 'x'.repeat(513) }), 'validation_error', 'topic', 'too_long');
    await rejects(
      t.services.readers.create(cliCaller(2147483000), {
        family: 'generic-json',
        identity: 'g',
        topic: unique('t'),
      }),
      'not_found',
    );
  });

  it('maps antennas to live locations of the organization', async () => {
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const { reader } = await f.reader('zebra-fx', []);
    const all = await t.services.readers.addScanPoint(cliCaller(f.orgId), reader.id, { locationId: dock });
    expect(all).toMatchObject({ readerId: reader.id, antenna: null, locationId: dock });
    await t.services.readers.addScanPoint(cliCaller(f.orgId), reader.id, { locationId: shelf, antenna: 2 });
    await rejects(
      t.services.readers.addScanPoint(cliCaller(f.orgId), reader.id, { locationId: shelf, antenna: 2 }),
      'conflict',
    );
    await rejects(
      t.services.readers.addScanPoint(cliCaller(f.orgId), reader.id, { locationId: shelf }),
      'conflict',
    );
    await rejects(
      t.services.readers.addScanPoint(cliCaller(f.orgId), reader.id, { locationId: dock, antenna: 70000 }),
      'validation_error',
      'antenna',
      'invalid_value',
    );
    // A deleted location, another organization's location, a missing one.
    const gone = await f.location();
    await t.database.db.pool.query('UPDATE locations SET deleted_at = now() WHERE id = $1', [gone]);
    const other = await ingestFixture(t);
    const foreign = await other.location();
    for (const locationId of [gone, foreign, 2147483647]) {
      await rejects(
        t.services.readers.addScanPoint(cliCaller(f.orgId), reader.id, { locationId, antenna: 3 }),
        'validation_error',
        'location_id',
        'fk_not_found',
      );
    }
    await rejects(
      t.services.readers.addScanPoint(cliCaller(other.orgId), reader.id, { locationId: foreign }),
      'not_found',
    );

    const listed = await t.services.readers.get(f.orgId, reader.id);
    expect(listed.scanPoints.map((p) => [p.antenna, p.locationId])).toEqual([
      [null, dock],
      [2, shelf],
    ]);
    await t.services.readers.removeScanPoint(cliCaller(f.orgId), reader.id, 2);
    await rejects(t.services.readers.removeScanPoint(cliCaller(f.orgId), reader.id, 2), 'not_found');
    await t.services.readers.removeScanPoint(cliCaller(f.orgId), reader.id, null);
    expect((await t.services.readers.get(f.orgId, reader.id)).scanPoints).toEqual([]);
  });

  it('issues a webhook secret once and stores only its SHA-256', async () => {
    const f = await ingestFixture(t);
    const { reader, webhookSecret } = await t.services.readers.create(cliCaller(f.orgId), {
      family: 'impinj-r700',
      identity: 'impinj-webhook',
      topic: unique('t'),
      webhook: true,
    });
    expect(webhookSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(reader.webhook).toBe(true);
    const { rows } = await t.database.db.pool.query('SELECT webhook_secret_hash FROM readers WHERE id = $1', [
      reader.id,
    ]);
    expect(rows[0].webhook_secret_hash).toBe(createHash('sha256').update(webhookSecret!).digest('hex'));
    expect(JSON.stringify(await t.services.readers.get(f.orgId, reader.id))).not.toContain(webhookSecret);
  });

  it('issues MQTT credentials once, stores only their $7$ hash, rotates and revokes them', async () => {
    const f = await ingestFixture(t);
    const { reader, mqtt } = await t.services.readers.create(cliCaller(f.orgId), {
      family: 'zebra-fx',
      identity: unique('fx'),
      topic: unique('t'),
    });
    expect(mqtt.username).toBe(`reader-${reader.id}`);
    expect(mqtt.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(reader.mqtt).toBe(true);
    const stored = async () =>
      (
        await t.database.db.pool.query<{ h: string | null }>(
          'SELECT mqtt_password_hash AS h FROM readers WHERE id = $1',
          [reader.id],
        )
      ).rows[0]!.h;
    const first = await stored();
    expect(first).toMatch(/^\$7\$101\$[A-Za-z0-9+/]{16}\$[A-Za-z0-9+/]{86}==$/);
    expect(verifyMqttPassword(mqtt.password, first!)).toBe(true);
    expect(JSON.stringify(await t.services.readers.get(f.orgId, reader.id))).not.toContain(mqtt.password);

    const rotated = await t.services.readers.rotateMqttCredentials(cliCaller(f.orgId), reader.id);
    expect(rotated.mqtt.username).toBe(mqtt.username);
    const second = await stored();
    expect(verifyMqttPassword(rotated.mqtt.password, second!)).toBe(true);
    expect(verifyMqttPassword(mqtt.password, second!)).toBe(false);

    await t.services.readers.revokeMqttCredentials(cliCaller(f.orgId), reader.id);
    expect(await stored()).toBeNull();
    expect((await t.services.readers.get(f.orgId, reader.id)).mqtt).toBe(false);
    // Another organization cannot touch them.
    const other = await ingestFixture(t);
    await rejects(t.services.readers.rotateMqttCredentials(cliCaller(other.orgId), reader.id), 'not_found');
    await rejects(t.services.readers.revokeMqttCredentials(cliCaller(other.orgId), reader.id), 'not_found');
  });
});
