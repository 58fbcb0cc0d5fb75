/**
 * GET /api/v1/reports/asset-locations (API-SPEC "Asset-location report", "Asset-location
 * report row", "Rules shared by list endpoints"): one `it` per rule. Each test builds its
 * own organization, so every expectation is over the whole report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { type Fixture, fixture, qs } from './fixtures.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});

afterAll(async () => {
  await t?.close();
});

interface Row {
  asset_id: number;
  asset_external_key: string;
  asset_last_seen: string;
  asset_deleted_at: string | null;
  location_id: number | null;
  location_external_key: string | null;
}

interface ListBody {
  data: Row[];
  limit: number;
  offset: number;
  total_count: number;
}

const URL = '/api/v1/reports/asset-locations';

async function report(f: Fixture, query: [string, string | number | boolean][] = []): Promise<ListBody> {
  const res = await f.get(`${URL}${qs(query)}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ListBody;
}

const keys = (body: ListBody) => body.data.map((r) => r.asset_external_key);

const sql = (text: string, values: unknown[] = []) => t.database.db.pool.query(text, values);

/**
 * Three locations and four scanned assets (plus one never scanned):
 *   A-3 at LOC-B, last seen 09:00      A-1 at LOC-A, last seen 10:00
 *   A-4 at LOC-C, last seen 11:00      A-2 at LOC-A, last seen 12:00
 */
async function scenario() {
  const f = await fixture(t);
  const L = {
    A: await f.location('LOC-A'),
    B: await f.location('LOC-B'),
    C: await f.location('LOC-C'),
  };
  const a = {
    1: await f.asset('A-1'),
    2: await f.asset('A-2'),
    3: await f.asset('A-3'),
    4: await f.asset('A-4'),
    never: await f.asset('A-NEVER'),
  };
  await f.scan(
    [a[3], L.A, '2025-03-01T08:00:00Z'],
    [a[3], L.B, '2025-03-01T09:00:00Z'],
    [a[1], L.A, '2025-03-01T10:00:00Z'],
    [a[4], L.C, '2025-03-01T11:00:00Z'],
    [a[2], L.A, '2025-03-01T12:00:00Z'],
  );
  return { f, L, a };
}

describe('GET /api/v1/reports/asset-locations', () => {
  it('has one row per scanned asset; never-scanned assets are absent', async () => {
    const { f, a } = await scenario();
    const body = await report(f);
    expect(body.total_count).toBe(4);
    expect(new Set(body.data.map((r) => r.asset_id))).toEqual(new Set([a[1], a[2], a[3], a[4]]));
    expect(body.data.map((r) => r.asset_id)).not.toContain(a.never);
    // A second scan of one asset still gives it one row.
    await f.scan([a[1], await f.location('LOC-D'), '2025-03-01T13:00:00Z']);
    expect((await report(f)).total_count).toBe(4);
  });

  it('rows carry exactly the spec fields with their types', async () => {
    const { f, L, a } = await scenario();
    const body = await report(f, [['asset_external_key', 'A-3']]);
    expect(body).toEqual({
      data: [
        {
          asset_id: a[3],
          asset_external_key: 'A-3',
          asset_last_seen: '2025-03-01T09:00:00.000Z',
          asset_deleted_at: null,
          location_id: L.B,
          location_external_key: 'LOC-B',
        },
      ],
      limit: 50,
      offset: 0,
      total_count: 1,
    });
    expect(Object.keys(body.data[0]!)).toEqual([
      'asset_id',
      'asset_external_key',
      'asset_last_seen',
      'asset_deleted_at',
      'location_id',
      'location_external_key',
    ]);
  });

  it('asset_last_seen is the newest sighting, and a late read moves neither it nor the location back', async () => {
    const { f, L, a } = await scenario();
    await f.scan([a[1], L.A, '2025-03-01T10:30:00Z']);
    await f.scan([a[1], L.C, '2025-03-01T10:10:00Z']);
    const row = (await report(f, [['asset_id', a[1]]])).data[0]!;
    expect(row).toMatchObject({
      asset_last_seen: '2025-03-01T10:30:00.000Z',
      location_id: L.A,
      location_external_key: 'LOC-A',
    });
    await f.scan([a[1], L.B, '2025-03-01T14:00:00.123Z']);
    expect((await report(f, [['asset_id', a[1]]])).data[0]).toMatchObject({
      asset_last_seen: '2025-03-01T14:00:00.123Z',
      location_external_key: 'LOC-B',
    });
  });

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
    const f = await fixture(t);
    const loc = await f.location('LOC-Q');
    const byName = await f.asset('Q-1', { name: 'Forklift Überlader' });
    const byKey = await f.asset('PALLET-77');
    const byTag = await f.asset('Q-3');
    await t.services.tags.attach(
      f.org.id,
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
    await t.services.tags.detach(f.org.id, { kind: 'asset', id: byTag }, rows[0].id);
    expect(await match('zeta')).toEqual([]);
  });

  it('q does not match the description or location fields', async () => {
    const f = await fixture(t);
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

  it('include_deleted adds soft-deleted assets with asset_deleted_at set; by default they are excluded', async () => {
    const { f, a } = await scenario();
    await sql("UPDATE assets SET deleted_at = '2025-04-01T00:00:00.123Z' WHERE id = $1", [a[2]]);
    expect(keys(await report(f))).toEqual(['A-4', 'A-1', 'A-3']);
    expect(keys(await report(f, [['include_deleted', 'false']]))).toEqual(['A-4', 'A-1', 'A-3']);
    const all = await report(f, [['include_deleted', 'true']]);
    expect(keys(all)).toEqual(['A-2', 'A-4', 'A-1', 'A-3']);
    expect(all.data.map((r) => r.asset_deleted_at)).toEqual(['2025-04-01T00:00:00.123Z', null, null, null]);
    expect(
      (
        await report(f, [
          ['include_deleted', 'true'],
          ['asset_external_key', 'A-2'],
        ])
      ).total_count,
    ).toBe(1);
    const fields = expectValidationError(await f.get(`${URL}?include_deleted=yes`));
    expect(fields).toEqual([expect.objectContaining({ field: 'include_deleted', code: 'invalid_value' })]);
  });

  it('assets outside their effective window are excluded (future valid_from, elapsed valid_to)', async () => {
    const { f, a } = await scenario();
    await sql("UPDATE assets SET valid_from = now() + interval '1 hour' WHERE id = $1", [a[1]]);
    await sql("UPDATE assets SET valid_to = now() - interval '1 second' WHERE id = $1", [a[2]]);
    await sql("UPDATE assets SET valid_to = now() + interval '1 hour' WHERE id = $1", [a[3]]);
    expect(keys(await report(f))).toEqual(['A-4', 'A-3']);
    expect(keys(await report(f, [['include_deleted', 'true']]))).toEqual(['A-4', 'A-3']);
    expect((await report(f, [['asset_id', a[1]]])).total_count).toBe(0);
    expect((await report(f, [['asset_external_key', 'A-2']])).total_count).toBe(0);
  });

  it('a location outside its window or soft-deleted shows as null location_id and location_external_key', async () => {
    const { f, L, a } = await scenario();
    await sql("UPDATE locations SET valid_to = now() - interval '1 second' WHERE id = $1", [L.A]);
    await sql("UPDATE locations SET valid_from = now() + interval '1 hour' WHERE id = $1", [L.B]);
    await sql('UPDATE locations SET deleted_at = now() WHERE id = $1', [L.C]);
    const body = await report(f, [['sort', 'asset_external_key']]);
    expect(body.data.map((r) => [r.asset_id, r.location_id, r.location_external_key])).toEqual([
      [a[1], null, null],
      [a[2], null, null],
      [a[3], null, null],
      [a[4], null, null],
    ]);
    // The rows stay; a hidden location matches no location filter.
    expect(body.total_count).toBe(4);
    expect((await report(f, [['location_id', L.A]])).total_count).toBe(0);
    expect((await report(f, [['location_external_key', 'LOC-C']])).total_count).toBe(0);
  });

  it('is_active is not a report parameter: 400 unknown_field (and so are other undeclared names)', async () => {
    const { f } = await scenario();
    for (const name of ['is_active', 'external_key', 'from', 'name', 'parent_id']) {
      const fields = expectValidationError(await f.get(`${URL}?${name}=true`));
      expect(fields, name).toEqual([expect.objectContaining({ field: name, code: 'unknown_field' })]);
    }
  });

  it('pages with limit and offset and reports total_count over the filtered set', async () => {
    const f = await fixture(t);
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

  it("never shows another organization's assets or locations", async () => {
    const mine = await scenario();
    const theirs = await scenario();
    const mineBody = await report(mine.f);
    const theirsBody = await report(theirs.f);
    expect(mineBody.total_count).toBe(4);
    expect(theirsBody.total_count).toBe(4);
    const theirIds = new Set(theirsBody.data.map((r) => r.asset_id));
    expect(mineBody.data.filter((r) => theirIds.has(r.asset_id))).toEqual([]);
    // Filtering on their ids finds nothing here.
    expect((await report(mine.f, [['asset_id', theirs.a[1]]])).total_count).toBe(0);
    expect((await report(mine.f, [['location_id', theirs.L.A]])).total_count).toBe(0);
    // Their soft-deleted assets stay theirs, include_deleted or not.
    await sql('UPDATE assets SET deleted_at = now() WHERE id = $1', [theirs.a[2]]);
    expect((await report(mine.f, [['include_deleted', 'true']])).total_count).toBe(4);
  });

  it("the report's view of assets shows only the transaction's organization, and nothing without one", async () => {
    const mine = await scenario();
    const theirs = await scenario();
    const ids = (rows: { id: number }[]) => new Set(rows.map((r) => r.id));
    const seen = await t.database.db.withOrg(mine.f.org.id, async (tx) => {
      return (await tx.query<{ id: number }>('SELECT id FROM tracked_assets_in_org')).rows;
    });
    expect(ids(seen)).toEqual(new Set([mine.a[1], mine.a[2], mine.a[3], mine.a[4]]));
    expect(ids(seen).has(theirs.a[1])).toBe(false);
    const unset = await t.database.db.system(async (tx) => {
      await tx.query('SET LOCAL ROLE tagtrail_app');
      return (await tx.query('SELECT count(*)::int AS n FROM tracked_assets_in_org')).rows[0].n;
    });
    expect(unset).toBe(0);
  });

  it('requires the tracking:read scope: assets:read alone is 403', async () => {
    const { f } = await scenario();
    const { token: assetsOnly } = await f.org.key(['assets:read', 'locations:read']);
    expectErrorEnvelope(await f.get(URL, assetsOnly), { status: 403, type: 'forbidden' });
    const { token: trackingOnly } = await f.org.key(['tracking:read']);
    expect((await f.get(URL, trackingOnly)).statusCode).toBe(200);
  });
});
