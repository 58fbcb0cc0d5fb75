/**
 * GET /api/v1/reports/asset-locations (API-SPEC "Asset-location report", "Asset-location
 * report row", "Rules shared by list endpoints"): one `it` per rule. Each test builds its
 * own organization, so every expectation is over the whole report.
 *
 * Sorting (default, per field, multi-field, nulls, unknown fields) and paging.
 */
import { describe, expect, it } from 'vitest';
import { expectValidationError } from '../helpers/error-envelope.js';
import { fixture, qs } from './fixtures.js';
import { keys, report, reportTestApp, URL } from './report-scenario.js';

const { app, sql, scenario } = reportTestApp();

describe('GET /api/v1/reports/asset-locations', () => {
  it('the default sort is -asset_last_seen (most recently seen first)', async () => {
    const { f } = await scenario();
    expect(keys(await report(f))).toEqual(['A-2', 'A-4', 'A-1', 'A-3']);
  });

  it.each([
    ['asset_last_seen', ['A-3', 'A-1', 'A-4', 'A-2']],
    ['asset_external_key', ['A-1', 'A-2', 'A-3', 'A-4']],
    // Ties on the location key fall back to the asset id, in the direction of the sort.
    ['location_external_key', ['A-1', 'A-2', 'A-3', 'A-4']],
  ])('sort=%s orders ascending and sort=-%s descending', async (field, ascending) => {
    const { f } = await scenario();
    expect(keys(await report(f, [['sort', field]]))).toEqual(ascending);
    expect(keys(await report(f, [['sort', `-${field}`]]))).toEqual([...ascending].reverse());
  });

  it('a multi-field sort orders by each field in turn', async () => {
    const { f } = await scenario();
    expect(keys(await report(f, [['sort', 'location_external_key,-asset_last_seen']]))).toEqual([
      'A-2',
      'A-1',
      'A-3',
      'A-4',
    ]);
    expect(keys(await report(f, [['sort', '-location_external_key,asset_external_key']]))).toEqual([
      'A-4',
      'A-3',
      'A-1',
      'A-2',
    ]);
    // A field named twice counts once, at its first place.
    expect(keys(await report(f, [['sort', 'asset_external_key,-asset_external_key']]))).toEqual([
      'A-1',
      'A-2',
      'A-3',
      'A-4',
    ]);
  });

  it('null locations sort last ascending and first descending by location_external_key', async () => {
    const { f, L } = await scenario();
    await sql('UPDATE locations SET deleted_at = now() WHERE id = $1', [L.B]);
    expect(keys(await report(f, [['sort', 'location_external_key']]))).toEqual(['A-1', 'A-2', 'A-4', 'A-3']);
    expect(keys(await report(f, [['sort', '-location_external_key']]))).toEqual(['A-3', 'A-4', 'A-2', 'A-1']);
  });

  it('an unknown sort field is 400 invalid_value with message `unknown sort field: <name>`', async () => {
    const { f } = await scenario();
    for (const [sort, name] of [
      ['foo', 'foo'],
      ['-name', 'name'],
      ['asset_last_seen,event_observed_at', 'event_observed_at'],
      ['location_id', 'location_id'],
      ['+asset_last_seen', '+asset_last_seen'],
    ]) {
      const fields = expectValidationError(await f.get(`${URL}${qs([['sort', sort!]])}`));
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

  it('pages with limit and offset and reports total_count over the filtered set', async () => {
    const f = await fixture(app());
    const loc = await f.location('LOC-P');
    const ids: number[] = [];
    for (let i = 1; i <= 7; i++) ids.push(await f.asset(`P-${i}`));
    await f.scan(...ids.map((id, i): [number, number, string] => [id, loc, `2025-03-01T10:0${i}:00Z`]));
    const seen: string[] = [];
    for (let offset = 0; offset < 7; offset += 3) {
      const page = await report(f, [
        ['sort', 'asset_external_key'],
        ['limit', 3],
        ['offset', offset],
      ]);
      expect(page).toMatchObject({ limit: 3, offset, total_count: 7 });
      seen.push(...keys(page));
    }
    expect(seen).toEqual(['P-1', 'P-2', 'P-3', 'P-4', 'P-5', 'P-6', 'P-7']);
    expect(await report(f, [['offset', 7]])).toEqual({ data: [], limit: 50, offset: 7, total_count: 7 });
    expect(
      await report(f, [
        ['offset', 100],
        ['q', 'P-'],
      ]),
    ).toEqual({ data: [], limit: 50, offset: 100, total_count: 7 });
    expect(
      (
        await report(f, [
          ['limit', 1],
          ['asset_external_key', 'P-1'],
          ['asset_external_key', 'P-2'],
        ])
      ).total_count,
    ).toBe(2);
    for (const [name, value, code] of [
      ['limit', '201', 'too_large'],
      ['limit', '0', 'invalid_value'],
      ['offset', '-1', 'invalid_value'],
      ['asset_id', '2147483648', 'too_large'],
      ['location_id', '0', 'invalid_value'],
    ] as const) {
      const fields = expectValidationError(await f.get(`${URL}?${name}=${value}`));
      expect(fields, `${name}=${value}`).toEqual([expect.objectContaining({ code })]);
    }
  });
});
