/**
 * GET /api/v1/assets/{asset_id}/history (API-SPEC "Asset history row" and the history
 * paragraph under Assets; docs/tracking.md for what the spec leaves open), the query
 * parameters: sort, the from/to window, paging and refused parameters. One `it` per rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import { type Fixture, qs } from './fixtures.js';
import { historyHelpers, historyWorld, type Row, shape } from './history-world.js';

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

  it('sort takes one of its two values, not a list of them: 400 invalid_value', async () => {
    const id = await newAsset();
    for (const sort of [
      'event_observed_at,-event_observed_at',
      '-event_observed_at,event_observed_at',
      'event_observed_at,event_observed_at',
    ]) {
      const fields = expectValidationError(
        await f.get(`/api/v1/assets/${id}/history${qs([['sort', sort]])}`),
      );
      expect(fields).toEqual([
        {
          field: 'sort',
          code: 'invalid_value',
          message: 'sort takes one value here: event_observed_at or -event_observed_at',
          params: { allowed_values: ['event_observed_at', '-event_observed_at'] },
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

  it('an offset whose + was sent unescaped (read as a space) is told to send it as %2B', async () => {
    const id = await newAsset();
    for (const name of ['from', 'to']) {
      const res = await f.get(`/api/v1/assets/${id}/history?${name}=2025-03-01T10:00:00.5+01:00`);
      expect(expectValidationError(res)).toEqual([
        {
          field: name,
          code: 'invalid_value',
          message: `${name} must be an RFC 3339 timestamp; a + in a query string is read as a space: send it as %2B`,
          params: expect.any(Object),
        },
      ]);
      expect(
        (await f.get(`/api/v1/assets/${id}/history?${name}=2025-03-01T10:00:00.5%2B01:00`)).statusCode,
      ).toBe(200);
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
});
