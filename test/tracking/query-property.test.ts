/**
 * Property: any query string sent to the history and report endpoints, mixing declared,
 * undeclared and list-filter parameters with valid and invalid values, gets either a list
 * envelope or an error envelope of the spec (never a 5xx), and every 400 carries only the
 * spec's field codes.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import { type Fixture, fixture } from './fixtures.js';

let t: TestApp;
let f: Fixture;
let assetId: number;
let locationId: number;

beforeAll(async () => {
  t = await buildTestApp();
  f = await fixture(t);
  locationId = await f.location('LOC-1');
  const other = await f.location('LOC-2');
  assetId = await f.asset('A-1');
  const second = await f.asset('A-2', { name: 'Second asset' });
  await f.scan(
    [assetId, locationId, '2025-03-01T10:00:00Z'],
    [assetId, other, '2025-03-01T11:00:00Z'],
    [second, other, '2025-03-01T12:00:00Z'],
  );
});

afterAll(async () => {
  await t?.close();
});

const NAMES = [
  'limit',
  'offset',
  'sort',
  'from',
  'to',
  'q',
  'include_deleted',
  'is_active',
  'external_key',
  'location_id',
  'location_external_key',
  'asset_id',
  'asset_external_key',
  'parent_id',
  'name',
  'LIMIT',
  'sort[]',
  'q[0]',
];

const timestamp = fc.oneof(
  fc
    .date({
      min: new Date('0001-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '2025-03-01T10:00:00Z',
    '2025-03-01T11:00:00+01:00',
    '2025-03-01T10:00:00.123456789-05:30',
    '0001-01-01T00:00:00Z',
    '1970-01-01T00:00:00Z',
    '0000-01-01T00:00:00+23:59',
    '9999-12-31T23:59:59.999-23:59',
    '2025-02-29T00:00:00Z',
    '2025-03-01',
    '2025/03/01T10:00:00Z',
    '2016-12-31T23:59:60Z',
    '',
  ),
);

const sortValue = fc
  .array(
    fc.tuple(
      fc.constantFrom('', '-', '+', '--'),
      fc.constantFrom(
        'event_observed_at',
        'asset_last_seen',
        'asset_external_key',
        'location_external_key',
        'external_key',
        'name',
        '',
      ),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((parts) => parts.map(([p, n]) => p + n).join(','));

const value = fc.oneof(
  fc.integer({ min: -5, max: 300 }).map(String),
  fc.constantFrom(
    '0',
    '1',
    '200',
    '201',
    '2147483647',
    '2147483648',
    '99999999999999999999',
    '1.5',
    '1e3',
    '-0',
    '01',
  ),
  fc.constantFrom('true', 'false', 'TRUE', 'yes', 'null'),
  fc.constantFrom('A-1', 'LOC-1', 'A-1,A-2', 'a b', 'Ä', '%', '_', '\\'),
  timestamp,
  sortValue,
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ minLength: 250, maxLength: 260 }),
);

/** A query string; most values encoded, some sent raw (malformed percent escapes and all). */
const query = fc
  .array(fc.tuple(fc.constantFrom(...NAMES), value, fc.boolean()), { maxLength: 6 })
  .map((pairs) =>
    pairs
      .map(([name, v, raw]) => {
        const encoded = raw ? v.replace(/[\s#&?]/g, (c) => encodeURIComponent(c)) : encodeURIComponent(v);
        return `${encodeURIComponent(name)}=${encoded}`;
      })
      .join('&'),
  );

/** Mostly valid queries, so the success path is explored as much as the error paths. */
const plausible = (params: Record<string, fc.Arbitrary<string>>) =>
  fc
    .array(fc.tuple(fc.constantFrom(...Object.keys(params)), fc.nat()), { maxLength: 5 })
    .chain((picks) =>
      fc.tuple(...picks.map(([name]) => params[name]!.map((v) => `${name}=${encodeURIComponent(v)}`))),
    )
    .map((parts) => parts.join('&'));

const historyQuery = fc.oneof(
  query,
  plausible({
    limit: fc.integer({ min: 1, max: 200 }).map(String),
    offset: fc.integer({ min: 0, max: 5 }).map(String),
    sort: fc.constantFrom('event_observed_at', '-event_observed_at'),
    from: timestamp,
    to: timestamp,
  }),
);

const reportQuery = fc.oneof(
  query,
  plausible({
    limit: fc.integer({ min: 1, max: 200 }).map(String),
    offset: fc.integer({ min: 0, max: 5 }).map(String),
    sort: sortValue,
    q: fc.string({ maxLength: 6 }),
    include_deleted: fc.constantFrom('true', 'false'),
    asset_id: fc.integer({ min: 1, max: 5 }).map(String),
    asset_external_key: fc.constantFrom('A-1', 'A-2', 'a-1'),
    location_id: fc.integer({ min: 1, max: 5 }).map(String),
    location_external_key: fc.constantFrom('LOC-1', 'LOC-2'),
  }),
);

function checkResponse(res: Awaited<ReturnType<Fixture['get']>>, rowKeys: string[]): void {
  const context = `${res.raw.req.url} -> ${res.statusCode} ${res.body.slice(0, 400)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  if (res.statusCode === 200) {
    const body = res.json() as {
      data: Record<string, unknown>[];
      limit: number;
      offset: number;
      total_count: number;
    };
    expect(Object.keys(body).sort(), context).toEqual(['data', 'limit', 'offset', 'total_count']);
    expect(body.limit, context).toBeGreaterThanOrEqual(1);
    expect(body.limit, context).toBeLessThanOrEqual(200);
    expect(body.data.length, context).toBeLessThanOrEqual(body.limit);
    if (body.data.length > 0)
      expect(body.total_count, context).toBeGreaterThanOrEqual(body.offset + body.data.length);
    for (const row of body.data) expect(Object.keys(row).sort(), context).toEqual([...rowKeys].sort());
    return;
  }
  expect([400, 404], context).toContain(res.statusCode);
  expectErrorEnvelope(res);
}

const HISTORY_KEYS = ['event_observed_at', 'location_id', 'location_external_key', 'duration_seconds'];
const REPORT_KEYS = [
  'asset_id',
  'asset_external_key',
  'asset_last_seen',
  'asset_deleted_at',
  'location_id',
  'location_external_key',
];

describe('random query strings', () => {
  it('history never answers 5xx, and every error is a spec envelope', async () => {
    await fc.assert(
      fc.asyncProperty(historyQuery, fc.constantFrom(1, 2), async (qs, which) => {
        const id = which === 1 ? assetId : 2147483647;
        checkResponse(await f.get(`/api/v1/assets/${id}/history?${qs}`), HISTORY_KEYS);
      }),
      { numRuns: 400 },
    );
  });

  it('the report never answers 5xx, and every error is a spec envelope', async () => {
    await fc.assert(
      fc.asyncProperty(reportQuery, async (qs) => {
        const res = await f.get(`/api/v1/reports/asset-locations?${qs}`);
        expect(res.statusCode, res.body).not.toBe(404);
        checkResponse(res, REPORT_KEYS);
      }),
      { numRuns: 400 },
    );
  });
});
