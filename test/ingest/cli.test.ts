/**
 * The reader and scan-point commands of the CLI, run in-process (the same commander program as
 * `tagtrail`) against the test database through DATABASE_URL; `scans import` is in
 * scans-import-cli.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMqttPassword } from '../../src/ingest/mqtt-credentials.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRET_KEYS } from '../helpers/secrets.js';
import { tagtrail } from './cli-run.js';
import { ingestFixture, unique } from './helpers.js';

let t: TestApp;
const savedEnv = { ...process.env };

beforeAll(async () => {
  t = await buildTestApp();
  process.env.DATABASE_URL = t.database.url;
  // The test app's key: it sealed the secrets in this database.
  process.env.TAGTRAIL_SECRET_KEYS = TEST_SECRET_KEYS;
  process.env.LOG_LEVEL = 'silent';
  delete process.env.MQTT_URL;
});
afterAll(async () => {
  process.env = savedEnv;
  await t?.close();
});

describe('tagtrail reader and scan-point', () => {
  it('rotates and revokes MQTT credentials, printing the new password once', async () => {
    const f = await ingestFixture(t);
    const added = JSON.parse(
      (
        await tagtrail(
          'reader',
          'add',
          '--org',
          String(f.orgId),
          '--family',
          'impinj-r700',
          '--identity',
          unique('r700'),
          '--topic',
          unique('t'),
          '--json',
        )
      ).stdout,
    );
    const id = String(added.id);
    const rotated = await tagtrail('reader', 'mqtt-rotate', '--org', String(f.orgId), '--reader', id);
    expect(rotated.stdout).toContain(`mqtt_username: reader-${id}\n`);
    const password = /mqtt_password: (\S+)/.exec(rotated.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(password).not.toBe(added.mqtt_password);
    expect(rotated.stderr).toContain('shown only now');
    const { rows } = await t.database.db.pool.query('SELECT mqtt_password_hash FROM readers WHERE id = $1', [
      id,
    ]);
    expect(verifyMqttPassword(password!, rows[0].mqtt_password_hash)).toBe(true);

    const revoked = await tagtrail(
      'reader',
      'mqtt-revoke',
      '--org',
      String(f.orgId),
      '--reader',
      id,
      '--json',
    );
    expect(JSON.parse(revoked.stdout)).toEqual({ id: Number(id), mqtt_credentials: false });
    const listed = JSON.parse((await tagtrail('reader', 'list', '--org', String(f.orgId), '--json')).stdout);
    expect(listed.data[0]).toMatchObject({ id: Number(id), mqtt_credentials: false });
  });

  it('adds a reader with a webhook secret shown once, maps an antenna, lists both', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const topic = `site/${unique('dock')}/reads`;
    const added = await tagtrail(
      'reader',
      'add',
      '--org',
      String(f.orgId),
      '--family',
      'zebra-fx',
      '--identity',
      'FX9600EECCA8',
      '--topic',
      topic,
      '--name',
      'Dock 3',
      '--webhook',
      '--json',
    );
    const reader = JSON.parse(added.stdout);
    expect(reader).toMatchObject({
      org_id: f.orgId,
      name: 'Dock 3',
      family: 'zebra-fx',
      identity: 'FX9600EECCA8',
      topic,
      webhook: true,
      webhook_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      mqtt_username: `reader-${reader.id}`,
      mqtt_credentials: true,
      mqtt_password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const point = JSON.parse(
      (
        await tagtrail(
          'scan-point',
          'add',
          '--org',
          String(f.orgId),
          '--reader',
          String(reader.id),
          '--location',
          String(dock),
          '--antenna',
          '2',
          '--json',
        )
      ).stdout,
    );
    expect(point).toMatchObject({ reader_id: reader.id, antenna: 2, location_id: dock });
    const listed = JSON.parse((await tagtrail('reader', 'list', '--org', String(f.orgId), '--json')).stdout);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({
      id: reader.id,
      good_reads: 0,
      scan_points: [{ antenna: 2, location_id: dock }],
    });
    expect(JSON.stringify(listed)).not.toContain(reader.webhook_secret);
    expect(JSON.stringify(listed)).not.toContain(reader.mqtt_password);
    const human = await tagtrail('reader', 'list', '--org', String(f.orgId));
    expect(human.stdout).toContain(`${reader.id}\tzebra-fx\tFX9600EECCA8\t${topic}`);
    expect(human.stdout).toContain(`2->${dock}`);
  });

  it('refuses bad input with the reason', async () => {
    const f = await ingestFixture(t);
    await expect(
      tagtrail(
        'reader',
        'add',
        '--org',
        String(f.orgId),
        '--family',
        'nfc',
        '--identity',
        'x',
        '--topic',
        'x',
      ),
    ).rejects.toThrow(/family must be one of/);
    await expect(
      tagtrail('scan-point', 'add', '--org', '1', '--reader', '1', '--location', 'x'),
    ).rejects.toThrow(/--location must be an integer/);
  });
});
