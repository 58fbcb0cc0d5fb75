/**
 * GET /api/v1/reports/asset-locations (API-SPEC "Asset-location report", "Asset-location
 * report row", "Rules shared by list endpoints"): one `it` per rule. Each test builds its
 * own organization, so every expectation is over the whole report.
 *
 * Filters: asset and location ids and keys, q, and refused parameters.
 */
import { describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import { fixture, qs } from './fixtures.js';
import { keys, report, reportTestApp, URL } from './report-scenario.js';

const { app, sql, scenario } = reportTestApp();

describe('GET /api/v1/reports/asset-locations', () => {
  it('location_id with location_external_key is 400 ambiguous_fields with one entry per parameter', async () => {
    const { f, L } = await scenario();
    const res = await f.get(
      `${URL}${qs([
        ['location_id', L.A],
        ['location_external_key', 'LOC-A'],
      ])}`,
    );
    const fields = expectValidationError(res);
    expect(fields.map((e) => [e.field, e.code])).toEqual([
      ['location_id', 'ambiguous_fields'],
      ['location_external_key', 'ambiguous_fields'],
    ]);
  });

  it('asset_id with asset_external_key is 400 ambiguous_fields with one entry per parameter', async () => {
    const { f, a } = await scenario();
    const res = await f.get(
      `${URL}${qs([
        ['asset_external_key', 'A-1'],
        ['asset_id', a[1]],
      ])}`,
    );
    const fields = expectValidationError(res);
    expect(fields.map((e) => [e.field, e.code])).toEqual([
      ['asset_id', 'ambiguous_fields'],
      ['asset_external_key', 'ambiguous_fields'],
    ]);
  });

  it('both pairs ambiguous at once are reported together, one entry per parameter', async () => {
    const { f, L, a } = await scenario();
    const res = await f.get(
      `${URL}${qs([
        ['location_external_key', 'LOC-A'],
        ['asset_id', a[1]],
        ['location_id', L.A],
        ['asset_external_key', 'A-2'],
      ])}`,
    );
    const fields = expectValidationError(res);
    expect(fields.map((e) => [e.field, e.code])).toEqual([
      ['asset_id', 'ambiguous_fields'],
      ['asset_external_key', 'ambiguous_fields'],
      ['location_id', 'ambiguous_fields'],
      ['location_external_key', 'ambiguous_fields'],
    ]);
  });

  it('the asset pair and the location pair intersect', async () => {
    const { f, L, a } = await scenario();
    expect(
      keys(
        await report(f, [
          ['asset_external_key', 'A-1'],
          ['asset_external_key', 'A-3'],
          ['location_external_key', 'LOC-A'],
        ]),
      ),
    ).toEqual(['A-1']);
    expect(
      keys(
        await report(f, [
          ['asset_id', a[4]],
          ['location_id', L.C],
        ]),
      ),
    ).toEqual(['A-4']);
    const none = await report(f, [
      ['asset_id', a[4]],
      ['location_external_key', 'LOC-A'],
    ]);
    expect(none).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
  });

  it('repeatable filters match any of their values', async () => {
    const { f, L, a } = await scenario();
    const sorted = [['sort', 'asset_external_key']] as [string, string][];
    expect(
      keys(await report(f, [...sorted, ['asset_id', a[2]], ['asset_id', a[4]], ['asset_id', a.never]])),
    ).toEqual(['A-2', 'A-4']);
    expect(
      keys(await report(f, [...sorted, ['asset_external_key', 'A-3'], ['asset_external_key', 'A-1']])),
    ).toEqual(['A-1', 'A-3']);
    expect(keys(await report(f, [...sorted, ['location_id', L.B], ['location_id', L.C]]))).toEqual([
      'A-3',
      'A-4',
    ]);
    expect(
      keys(
        await report(f, [...sorted, ['location_external_key', 'LOC-A'], ['location_external_key', 'LOC-C']]),
      ),
    ).toEqual(['A-1', 'A-2', 'A-4']);
    // Keys match case-sensitively and only live, effective rows.
    expect((await report(f, [['asset_external_key', 'a-1']])).total_count).toBe(0);
    expect((await report(f, [['location_external_key', 'loc-a']])).total_count).toBe(0);
  });

  it('a comma-joined external key is one value and 400 invalid_value', async () => {
    const { f } = await scenario();
    for (const name of ['asset_external_key', 'location_external_key']) {
      const fields = expectValidationError(await f.get(`${URL}?${name}=A-1,A-2`));
      expect(fields).toEqual([expect.objectContaining({ code: 'invalid_value' })]);
      expect(fields[0]!.field).toMatch(new RegExp(`^${name}(\\[0\\])?$`));
    }
    for (const name of ['asset_id', 'location_id']) {
      const fields = expectValidationError(await f.get(`${URL}?${name}=1,2`));
      expect(fields).toEqual([expect.objectContaining({ code: 'invalid_value' })]);
    }
  });

  it('q matches asset name, asset external_key and active tag values, case-insensitively', async () => {
    const f = await fixture(app());
    const loc = await f.location('LOC-Q');
    const byName = await f.asset('Q-1', { name: 'Forklift Überlader' });
    const byKey = await f.asset('PALLET-77');
    const byTag = await f.asset('Q-3');
    await app().services.tags.attach(
      cliCaller(f.org.id),
      { kind: 'asset', id: byTag },
      { tag_type: 'rfid', value: 'E280-Zeta-Tag' },
    );
    await f.scan(
      [byName, loc, '2025-03-01T10:00:00Z'],
      [byKey, loc, '2025-03-01T10:01:00Z'],
      [byTag, loc, '2025-03-01T10:02:00Z'],
    );
    const match = async (q: string) =>
      keys(
        await report(f, [
          ['q', q],
          ['sort', 'asset_external_key'],
        ]),
      );
    expect(await match('forklift')).toEqual(['Q-1']);
    expect(await match('ÜBERLADER')).toEqual(['Q-1']);
    expect(await match('pallet-7')).toEqual(['PALLET-77']);
    expect(await match('zeta-tag')).toEqual(['Q-3']);
    expect(await match('q-')).toEqual(['Q-1', 'Q-3']);
    // LIKE wildcards are literal.
    expect(await match('%')).toEqual([]);
    expect(await match('Q_1')).toEqual([]);
    // A tag detached is no longer matched.
    const { rows } = await sql('SELECT id FROM tags WHERE asset_id = $1', [byTag]);
    await app().services.tags.detach(cliCaller(f.org.id), { kind: 'asset', id: byTag }, rows[0].id);
    expect(await match('zeta')).toEqual([]);
  });

  it('q does not match the description or location fields', async () => {
    const f = await fixture(app());
    const loc = await f.location('WAREHOUSE-NORTH');
    await sql("UPDATE locations SET name = 'Cold storage', description = 'loading dock' WHERE id = $1", [
      loc,
    ]);
    const id = await f.asset('D-1', { name: 'Pump', description: 'hydraulic unit' });
    await f.scan([id, loc, '2025-03-01T10:00:00Z']);
    for (const q of ['hydraulic', 'warehouse', 'cold storage', 'loading', String(loc)]) {
      expect((await report(f, [['q', q]])).total_count, q).toBe(0);
    }
    expect((await report(f, [['q', 'pump']])).total_count).toBe(1);
    // Control characters separate the searched fields internally: no match spans two.
    expect((await report(f, [['q', 'D-1Pump']])).total_count).toBe(0);
  });

  it('q with a control character is 400 invalid_value', async () => {
    const { f } = await scenario();
    for (const q of ['a\u0001b', 'tab\there', 'line\nbreak', '\u007f', '\u0000']) {
      const fields = expectValidationError(await f.get(`${URL}?q=${encodeURIComponent(q)}`));
      expect(fields, JSON.stringify(q)).toEqual([
        expect.objectContaining({ field: 'q', code: 'invalid_value' }),
      ]);
    }
  });

  it('is_active is not a report parameter: 400 unknown_field (and so are other undeclared names)', async () => {
    const { f } = await scenario();
    for (const name of ['is_active', 'external_key', 'from', 'name', 'parent_id']) {
      const fields = expectValidationError(await f.get(`${URL}?${name}=true`));
      expect(fields, name).toEqual([expect.objectContaining({ field: name, code: 'unknown_field' })]);
    }
  });
});
