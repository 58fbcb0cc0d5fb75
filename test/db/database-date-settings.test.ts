/**
 * The service reads and writes times the same on a database set to print them otherwise
 * (`ALTER DATABASE ... SET DateStyle`, `... SET timezone`, as an operator of an external
 * PostgreSQL may have it): every connection fixes DateStyle ISO and TimeZone UTC
 * (src/db/app-connection.ts). A German DateStyle answered a create with 500: the
 * timestamps read back were no dates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/pool.js';
import { ISO_MS } from '../assets/helpers.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { fixture, qs } from '../tracking/fixtures.js';

describe.each([
  ['German', 'Asia/Kolkata'],
  ['SQL, DMY', 'America/New_York'],
])('on a database with DateStyle %s and timezone %s', (dateStyle, zone) => {
  let t: TestApp;

  beforeAll(async () => {
    const migrated = await createTestDatabase();
    await migrated.db.pool.query(`ALTER DATABASE ${migrated.name} SET DateStyle = '${dateStyle}'`);
    await migrated.db.pool.query(`ALTER DATABASE ${migrated.name} SET timezone = '${zone}'`);
    await migrated.db.close();
    // New connections: the database's settings apply to sessions that start after them.
    t = await buildTestApp({ database: { ...migrated, db: createDatabase(migrated.url, { max: 10 }) } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('assets and history answer their timestamps in the wire form', async () => {
    const f = await fixture(t);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { ...bearer(f.token), 'content-type': 'application/json' },
      payload: { name: 'Zoned', valid_from: '1850-01-01T00:00:00.123Z', valid_to: '2026-11-01T05:30:00Z' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const asset = created.json().data;
    expect([asset.valid_from, asset.valid_to]).toEqual([
      '1850-01-01T00:00:00.123Z',
      '2026-11-01T05:30:00.000Z',
    ]);
    expect(asset.created_at).toMatch(ISO_MS);
    const read = await f.get(`/api/v1/assets/${asset.id}`);
    expect(read.json().data).toEqual(asset);
    const location = await f.location('ZONED-LOC');
    await f.scan([asset.id, location, '1850-01-01T00:00:00.123Z']);
    const history = await f.get(
      `/api/v1/assets/${asset.id}/history${qs([
        ['from', '1850-01-01T00:00:00.123Z'],
        ['to', '1850-01-01T00:00:00.123Z'],
      ])}`,
    );
    expect(history.json().data).toEqual([
      {
        event_observed_at: '1850-01-01T00:00:00.123Z',
        location_id: location,
        location_external_key: 'ZONED-LOC',
        duration_seconds: 0,
      },
    ]);
  });
});
