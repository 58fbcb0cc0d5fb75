/**
 * GET /api/v1/assets/{asset_id}/history (API-SPEC "Asset history row" and the history
 * paragraph under Assets; docs/tracking.md for what the spec leaves open), the rows: stays and
 * their durations, late and duplicate reads, which assets and locations show, and access.
 * One `it` per rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import { type Fixture, fixture } from './fixtures.js';
import { historyHelpers, historyWorld, shape } from './history-world.js';

let t: TestApp;
let f: Fixture;
let A: number;
let B: number;
let C: number;

beforeAll(async () => {
  t = await buildTestApp();
  ({ f, A, B, C } = await historyWorld(t));
});

afterAll(async () => {
  await t?.close();
});

const { newAsset, history, threeStays } = historyHelpers(() => ({ f, A, B, C }));

describe('GET /api/v1/assets/{asset_id}/history', () => {
  it('rows are stays: event_observed_at is the arrival, with location_id, location_external_key and a numeric duration_seconds', async () => {
    const id = await threeStays();
    const body = await history(id, [['sort', 'event_observed_at']]);
    expect(Object.keys(body).sort()).toEqual(['data', 'limit', 'offset', 'total_count']);
    expect(body.data).toEqual([
      {
        event_observed_at: '2025-03-01T10:00:00.000Z',
        location_id: A,
        location_external_key: 'LOC-A',
        duration_seconds: 3600,
      },
      {
        event_observed_at: '2025-03-01T11:00:00.000Z',
        location_id: B,
        location_external_key: 'LOC-B',
        duration_seconds: 3600,
      },
      {
        event_observed_at: '2025-03-01T12:00:00.000Z',
        location_id: C,
        location_external_key: 'LOC-C',
        duration_seconds: 900,
      },
    ]);
    for (const row of body.data) {
      expect(Object.keys(row).sort()).toEqual([
        'duration_seconds',
        'event_observed_at',
        'location_external_key',
        'location_id',
      ]);
      expect(row.event_observed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(typeof row.duration_seconds).toBe('number');
    }
  });

  it('duration runs to the next arrival; the current stay runs to its last sighting, with millisecond precision', async () => {
    const id = await newAsset();
    await f.scan(
      [id, A, '2025-03-01T10:00:00.000Z'],
      [id, A, '2025-03-01T10:00:05.000Z'],
      [id, B, '2025-03-01T10:00:07.250Z'],
      [id, B, '2025-03-01T10:00:09.001Z'],
    );
    const body = await history(id, [['sort', 'event_observed_at']]);
    // A: to the arrival at B (7.25 s), not to A's last sighting (5 s); B: to its last sighting.
    expect(body.data.map((r) => r.duration_seconds)).toEqual([7.25, 1.751]);
    const single = await newAsset();
    await f.scan([single, A, '2025-03-01T10:00:00Z']);
    expect((await history(single)).data.map((r) => r.duration_seconds)).toEqual([0]);
  });

  it("location_external_key is null once the location's valid_to has elapsed; location_id is still given", async () => {
    const gone = await f.location('LOC-GONE');
    const id = await newAsset();
    await f.scan([id, gone, '2025-03-01T10:00:00Z'], [id, A, '2025-03-01T11:00:00Z']);
    await t.database.db.pool.query(
      `UPDATE locations SET valid_from = now() - interval '2 days', valid_to = now() - interval '1 second' WHERE id = $1`,
      [gone],
    );
    expect((await history(id, [['sort', 'event_observed_at']])).data).toEqual([
      {
        event_observed_at: '2025-03-01T10:00:00.000Z',
        location_id: gone,
        location_external_key: null,
        duration_seconds: 3600,
      },
      {
        event_observed_at: '2025-03-01T11:00:00.000Z',
        location_id: A,
        location_external_key: 'LOC-A',
        duration_seconds: 0,
      },
    ]);
    // A window that closes in the future has not elapsed.
    await t.database.db.pool.query(`UPDATE locations SET valid_to = now() + interval '1 day' WHERE id = $1`, [
      gone,
    ]);
    expect((await history(id, [['sort', 'event_observed_at']])).data[0]!.location_external_key).toBe(
      'LOC-GONE',
    );
  });

  it('the asset is found when its valid_to has elapsed (and before its valid_from)', async () => {
    const expired = await newAsset();
    await f.scan([expired, A, '2025-03-01T10:00:00Z']);
    await t.database.db.pool.query(
      `UPDATE assets SET valid_from = now() - interval '2 days', valid_to = now() - interval '1 day' WHERE id = $1`,
      [expired],
    );
    expect((await history(expired)).data).toHaveLength(1);
    const future = await newAsset({ validFrom: "now() + interval '1 day'" });
    expect(await history(future)).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
  });

  it('404 for a soft-deleted asset, a missing asset and another organization’s asset', async () => {
    const deleted = await newAsset();
    await f.scan([deleted, A, '2025-03-01T10:00:00Z']);
    await t.database.db.pool.query('UPDATE assets SET deleted_at = now() WHERE id = $1', [deleted]);
    const other = await fixture(t, 'Other org');
    const foreignLocation = await other.location('LOC-X');
    const foreign = await other.asset('X-1');
    await other.scan([foreign, foreignLocation, '2025-03-01T10:00:00Z']);
    expect((await other.get(`/api/v1/assets/${foreign}/history`)).statusCode).toBe(200);
    for (const id of [deleted, foreign, 2147483647]) {
      const res = await f.get(`/api/v1/assets/${id}/history`);
      expectErrorEnvelope(res, { status: 404, type: 'not_found' });
    }
  });

  it('a 404 past the end of a deleted asset’s stays leaves its connection clean for the next requests', async () => {
    // The existence check and the page go out together; an empty page past the end sends the
    // count after them, which must finish before the transaction ends and the connection is reused.
    const deleted = await newAsset();
    await f.scan([deleted, A, '2025-03-01T10:00:00Z']);
    await t.database.db.pool.query('UPDATE assets SET deleted_at = now() WHERE id = $1', [deleted]);
    const live = await threeStays();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 2
          ? f.get(`/api/v1/assets/${deleted}/history?offset=5`)
          : f.get(`/api/v1/assets/${live}/history?offset=1&limit=1`),
      ),
    );
    answers.forEach((res, i) => {
      if (i % 2) expectErrorEnvelope(res, { status: 404, type: 'not_found' });
      else expect(res.json()).toMatchObject({ offset: 1, limit: 1, total_count: 3 });
    });
  });

  it('requires the tracking:read scope: assets:read alone is 403', async () => {
    const id = await threeStays();
    const { token: assetsOnly } = await f.org.key(['assets:read', 'assets:write', 'locations:read']);
    expectErrorEnvelope(await f.get(`/api/v1/assets/${id}/history`, assetsOnly), {
      status: 403,
      type: 'forbidden',
    });
    const { token: trackingOnly } = await f.org.key(['tracking:read']);
    expect((await f.get(`/api/v1/assets/${id}/history`, trackingOnly)).statusCode).toBe(200);
  });

  it('late reads and out-of-order imports give the rows of the true order (A@10:00, C@12:00, late B@11:00 → A, B, C)', async () => {
    const id = await newAsset();
    await f.scan([id, A, '2025-03-01T10:00:00Z']);
    await f.scan([id, C, '2025-03-01T12:00:00Z']);
    await f.scan([id, B, '2025-03-01T11:00:00Z']);
    expect(shape((await history(id, [['sort', 'event_observed_at']])).data)).toEqual([
      ['2025-03-01T10:00:00.000Z', 'LOC-A', 3600],
      ['2025-03-01T11:00:00.000Z', 'LOC-B', 3600],
      ['2025-03-01T12:00:00.000Z', 'LOC-C', 0],
    ]);
    // One import in reverse order gives the same history.
    const reversed = await newAsset();
    await f.scan(
      [reversed, C, '2025-03-01T12:00:00Z'],
      [reversed, B, '2025-03-01T11:00:00Z'],
      [reversed, A, '2025-03-01T10:00:00Z'],
    );
    expect((await history(reversed)).data).toEqual((await history(id)).data);
  });

  it('a late read inside a stay at another location splits it; the stay resumes 1 ms after the read', async () => {
    const id = await newAsset();
    await f.scan([id, A, '2025-03-01T10:00:00Z'], [id, A, '2025-03-01T12:00:00Z']);
    await f.scan([id, B, '2025-03-01T11:00:00Z']);
    expect(shape((await history(id, [['sort', 'event_observed_at']])).data)).toEqual([
      ['2025-03-01T10:00:00.000Z', 'LOC-A', 3600],
      ['2025-03-01T11:00:00.000Z', 'LOC-B', 0.001],
      ['2025-03-01T11:00:00.001Z', 'LOC-A', 3599.999],
    ]);
  });

  it('a late read at the current location does not move the asset backwards', async () => {
    const id = await newAsset();
    await f.scan([id, A, '2025-03-01T10:00:00Z'], [id, B, '2025-03-01T12:00:00Z']);
    await f.scan([id, A, '2025-03-01T11:00:00Z']);
    expect(shape((await history(id)).data)).toEqual([
      ['2025-03-01T12:00:00.000Z', 'LOC-B', 0],
      ['2025-03-01T10:00:00.000Z', 'LOC-A', 7200],
    ]);
  });

  it('same-instant reads at two locations keep the stored observation', async () => {
    const id = await newAsset();
    await f.scan([id, A, '2025-03-01T10:00:00Z'], [id, B, '2025-03-01T10:00:00.001Z']);
    await f.scan([id, C, '2025-03-01T10:00:00Z']);
    expect(shape((await history(id, [['sort', 'event_observed_at']])).data)).toEqual([
      ['2025-03-01T10:00:00.000Z', 'LOC-A', 0.001],
      ['2025-03-01T10:00:00.001Z', 'LOC-B', 0],
    ]);
    // The instant of a stay's last sighting is stored too: the current location stays.
    const last = await newAsset();
    await f.scan([last, A, '2025-03-01T10:00:00Z'], [last, A, '2025-03-01T10:05:00Z']);
    await f.scan([last, C, '2025-03-01T10:05:00Z']);
    expect(shape((await history(last)).data)).toEqual([['2025-03-01T10:00:00.000Z', 'LOC-A', 300]]);
    const row = await f.get(`/api/v1/reports/asset-locations?asset_id=${last}`);
    expect(row.json().data[0]).toMatchObject({ location_id: A, asset_last_seen: '2025-03-01T10:05:00.000Z' });
  });

  it('duplicate reads do not add rows', async () => {
    const id = await threeStays();
    const before = await history(id);
    await f.scan([id, A, '2025-03-01T10:00:00Z'], [id, B, '2025-03-01T11:00:00Z']);
    await f.scan(
      [id, B, '2025-03-01T11:00:00Z'],
      [id, C, '2025-03-01T12:15:00Z'],
      [id, C, '2025-03-01T12:15:00Z'],
    );
    expect(await history(id)).toEqual(before);
  });

  it('a stationary asset with many reads has one row', async () => {
    const id = await newAsset();
    const reads = Array.from({ length: 200 }, (_, i): [number, number, string] => [
      id,
      B,
      new Date(Date.UTC(2025, 2, 1, 8) + ((i * 7919) % 200) * 60_000).toISOString(),
    ]);
    await f.scan(...reads.slice(0, 120));
    await f.scan(...reads.slice(120));
    const body = await history(id);
    expect(body.total_count).toBe(1);
    expect(shape(body.data)).toEqual([['2025-03-01T08:00:00.000Z', 'LOC-B', 199 * 60]]);
  });
});
