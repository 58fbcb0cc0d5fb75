/**
 * GET /api/v1/assets/{asset_id}/history (API-SPEC "Asset history row" and the history
 * paragraph under Assets; docs/tracking.md for what the spec leaves open): one `it` per rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { type Fixture, fixture, qs } from './fixtures.js';

let t: TestApp;
let f: Fixture;
let A: number;
let B: number;
let C: number;

beforeAll(async () => {
  t = await buildTestApp();
  f = await fixture(t);
  A = await f.location('LOC-A');
  B = await f.location('LOC-B');
  C = await f.location('LOC-C');
});

afterAll(async () => {
  await t?.close();
});

interface Row {
  event_observed_at: string;
  location_id: number | null;
  location_external_key: string | null;
  duration_seconds: number;
}

interface ListBody {
  data: Row[];
  limit: number;
  offset: number;
  total_count: number;
}

let assetCounter = 0;
/** A fresh asset for one test, so tests do not share history. */
const newAsset = (options?: Parameters<Fixture['asset']>[1]) => f.asset(`H-${++assetCounter}`, options);

async function history(assetId: number, query: [string, string | number | boolean][] = []) {
  const res = await f.get(`/api/v1/assets/${assetId}/history${qs(query)}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ListBody;
}

const shape = (rows: Row[]) =>
  rows.map((r) => [r.event_observed_at, r.location_external_key, r.duration_seconds]);

/** An asset seen at A at 10:00 and 10:30, at B at 11:00, at C at 12:00 and 12:15 (2025-03-01). */
async function threeStays(): Promise<number> {
  const id = await newAsset();
  await f.scan(
    [id, A, '2025-03-01T10:00:00Z'],
    [id, A, '2025-03-01T10:30:00Z'],
    [id, B, '2025-03-01T11:00:00Z'],
    [id, C, '2025-03-01T12:00:00Z'],
    [id, C, '2025-03-01T12:15:00Z'],
  );
  return id;
}

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

  it('the default sort is -event_observed_at (newest first)', async () => {
    const id = await threeStays();
    expect((await history(id)).data.map((r) => r.location_external_key)).toEqual(['LOC-C', 'LOC-B', 'LOC-A']);
  });

  it('sort=event_observed_at is ascending and sort=-event_observed_at descending', async () => {
    const id = await threeStays();
    const asc = await history(id, [['sort', 'event_observed_at']]);
    expect(asc.data.map((r) => r.location_external_key)).toEqual(['LOC-A', 'LOC-B', 'LOC-C']);
    const desc = await history(id, [['sort', '-event_observed_at']]);
    expect(desc.data).toEqual([...asc.data].reverse());
  });

  it('sort=foo is 400 invalid_value with message `unknown sort field: foo`', async () => {
    const id = await newAsset();
    for (const [sort, name] of [
      ['foo', 'foo'],
      ['-foo', 'foo'],
      ['event_observed_at,asset_last_seen', 'asset_last_seen'],
      ['created_at', 'created_at'],
    ]) {
      const res = await f.get(`/api/v1/assets/${id}/history${qs([['sort', sort!]])}`);
      const fields = expectValidationError(res);
      expect(fields).toEqual([
        {
          field: 'sort',
          code: 'invalid_value',
          message: `unknown sort field: ${name}`,
          params: expect.any(Object),
        },
      ]);
    }
  });

  it('from and to are inclusive bounds on event_observed_at, either optional', async () => {
    const id = await threeStays();
    const keys = async (query: [string, string][]) =>
      (await history(id, [['sort', 'event_observed_at'], ...query])).data.map((r) => r.location_external_key);
    expect(await keys([['from', '2025-03-01T11:00:00Z']])).toEqual(['LOC-B', 'LOC-C']);
    expect(await keys([['from', '2025-03-01T11:00:00.001Z']])).toEqual(['LOC-C']);
    expect(await keys([['to', '2025-03-01T11:00:00Z']])).toEqual(['LOC-A', 'LOC-B']);
    expect(await keys([['to', '2025-03-01T10:59:59.999Z']])).toEqual(['LOC-A']);
    expect(
      await keys([
        ['from', '2025-03-01T11:00:00Z'],
        ['to', '2025-03-01T11:00:00Z'],
      ]),
    ).toEqual(['LOC-B']);
    // A stay that began before `from` is outside, even though the asset was still there.
    expect(await keys([['from', '2025-03-01T10:15:00Z']])).toEqual(['LOC-B', 'LOC-C']);
    expect(await keys([['from', '2030-01-01T00:00:00Z']])).toEqual([]);
  });

  it('durations in a from/to window still run to the next arrival outside it', async () => {
    const id = await threeStays();
    const body = await history(id, [['to', '2025-03-01T11:30:00Z']]);
    expect(shape(body.data)).toEqual([
      ['2025-03-01T11:00:00.000Z', 'LOC-B', 3600],
      ['2025-03-01T10:00:00.000Z', 'LOC-A', 3600],
    ]);
    expect(body.total_count).toBe(2);
  });

  it('from and to accept any RFC 3339 offset and fraction, compared by instant', async () => {
    const id = await threeStays();
    const keys = async (from: string, to: string) =>
      (
        await history(id, [
          ['sort', 'event_observed_at'],
          ['from', from],
          ['to', to],
        ])
      ).data.map((r) => r.location_external_key);
    // 11:00Z written as 12:00+01:00 and 05:30-05:30; 12:00Z as 17:30+05:30.
    expect(await keys('2025-03-01T12:00:00+01:00', '2025-03-01T17:30:00+05:30')).toEqual(['LOC-B', 'LOC-C']);
    expect(await keys('2025-03-01T05:30:00-05:30', '2025-03-01T11:00:00.000999999z')).toEqual(['LOC-B']);
    expect(await keys('2025-03-01t11:00:00.9Z', '2025-03-01T12:00:00.000+00:00')).toEqual(['LOC-C']);
  });

  it('to earlier than from is 400 invalid_value on to', async () => {
    const id = await newAsset();
    const res = await f.get(
      `/api/v1/assets/${id}/history${qs([
        ['from', '2025-03-01T11:00:00Z'],
        ['to', '2025-03-01T11:59:59+01:00'],
      ])}`,
    );
    const fields = expectValidationError(res);
    expect(fields).toHaveLength(1);
    expect(fields[0]).toMatchObject({ field: 'to', code: 'invalid_value' });
    // Equal bounds are a one-instant window, not an error.
    await history(id, [
      ['from', '2025-03-01T11:00:00Z'],
      ['to', '2025-03-01T12:00:00+01:00'],
    ]);
  });

  it('a timestamp that is not RFC 3339 is 400 invalid_value with the RFC 3339 message', async () => {
    const id = await newAsset();
    for (const name of ['from', 'to']) {
      for (const value of [
        '2025-03-01',
        '2025/03/01T10:00:00Z',
        '',
        '2025-03-01T10:00:00',
        '2025-03-01 10:00:00Z',
        '2025-02-30T10:00:00Z',
        '2025-03-01T24:00:00Z',
        '2025-03-01T10:00:00.1234567890Z',
        '1740823200000',
        'now',
      ]) {
        const res = await f.get(`/api/v1/assets/${id}/history${qs([[name, value]])}`);
        const fields = expectValidationError(res);
        expect(fields, `${name}=${value}`).toEqual([
          {
            field: name,
            code: 'invalid_value',
            message: `${name} must be an RFC 3339 timestamp`,
            params: expect.any(Object),
          },
        ]);
      }
    }
  });

  it('the zero instant and the Unix epoch are 400 invalid_value in any offset', async () => {
    const id = await newAsset();
    for (const value of ['0001-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z', '1970-01-01T01:00:00+01:00']) {
      const fields = expectValidationError(
        await f.get(`/api/v1/assets/${id}/history${qs([['from', value]])}`),
      );
      expect(fields).toEqual([expect.objectContaining({ field: 'from', code: 'invalid_value' })]);
    }
  });

  it('pages with limit and offset and reports total_count over the window', async () => {
    const id = await newAsset();
    // Ten stays alternating between A and B, one minute apart.
    await f.scan(
      ...Array.from({ length: 10 }, (_, i): [number, number, string] => [
        id,
        i % 2 ? B : A,
        new Date(Date.UTC(2025, 2, 1, 10, i)).toISOString(),
      ]),
    );
    const all = await history(id, [['sort', 'event_observed_at']]);
    expect(all).toMatchObject({ limit: 50, offset: 0, total_count: 10 });
    expect(all.data).toHaveLength(10);
    const pages: Row[] = [];
    for (let offset = 0; offset < 10; offset += 3) {
      const page = await history(id, [
        ['sort', 'event_observed_at'],
        ['limit', 3],
        ['offset', offset],
      ]);
      expect(page).toMatchObject({ limit: 3, offset, total_count: 10 });
      pages.push(...page.data);
    }
    expect(pages).toEqual(all.data);
    const windowed = await history(id, [
      ['from', '2025-03-01T10:02:00Z'],
      ['limit', 2],
    ]);
    expect(windowed).toMatchObject({ limit: 2, offset: 0, total_count: 8 });
    expect(windowed.data.map((r) => r.event_observed_at)).toEqual([
      '2025-03-01T10:09:00.000Z',
      '2025-03-01T10:08:00.000Z',
    ]);
  });

  it('an offset past the end gives empty data with the right total_count', async () => {
    const id = await threeStays();
    expect(await history(id, [['offset', 3]])).toEqual({ data: [], limit: 50, offset: 3, total_count: 3 });
    expect(
      await history(id, [
        ['offset', 2147483647],
        ['limit', 1],
      ]),
    ).toEqual({
      data: [],
      limit: 1,
      offset: 2147483647,
      total_count: 3,
    });
    const empty = await newAsset();
    expect(await history(empty)).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
    expect(await history(empty, [['offset', 10]])).toEqual({
      data: [],
      limit: 50,
      offset: 10,
      total_count: 0,
    });
  });

  it('limit outside 1..200 and a negative offset are 400', async () => {
    const id = await newAsset();
    const cases: [string, string, string][] = [
      ['limit', '201', 'too_large'],
      ['limit', '0', 'invalid_value'],
      ['offset', '-1', 'invalid_value'],
      ['offset', '2147483648', 'too_large'],
      ['limit', 'ten', 'invalid_value'],
    ];
    for (const [name, value, code] of cases) {
      const fields = expectValidationError(await f.get(`/api/v1/assets/${id}/history${qs([[name, value]])}`));
      expect(fields, `${name}=${value}`).toEqual([expect.objectContaining({ field: name, code })]);
    }
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

  it('list filters are 400 invalid_context naming GET /api/v1/assets', async () => {
    const id = await newAsset();
    const filters: [string, string][] = [
      ['include_deleted', 'true'],
      ['q', 'abc'],
      ['is_active', 'true'],
      ['external_key', 'H-1'],
      ['location_id', String(A)],
      ['location_external_key', 'LOC-A'],
    ];
    for (const [name, value] of filters) {
      const fields = expectValidationError(await f.get(`/api/v1/assets/${id}/history${qs([[name, value]])}`));
      expect(fields, name).toEqual([
        {
          field: name,
          code: 'invalid_context',
          message: expect.stringContaining('GET /api/v1/assets'),
          params: expect.any(Object),
        },
      ]);
      expect(fields[0]!.message).not.toContain('/history');
    }
    // Several at once: one entry each.
    const res = await f.get(`/api/v1/assets/${id}/history?q=a&is_active=false`);
    expect(expectValidationError(res).map((e) => [e.field, e.code])).toEqual([
      ['is_active', 'invalid_context'],
      ['q', 'invalid_context'],
    ]);
  });

  it('an undeclared query parameter is 400 unknown_field', async () => {
    const id = await newAsset();
    for (const name of ['asset_last_seen', 'from_ts', 'page']) {
      const fields = expectValidationError(await f.get(`/api/v1/assets/${id}/history${qs([[name, '1']])}`));
      expect(fields).toEqual([expect.objectContaining({ field: name, code: 'unknown_field' })]);
    }
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
