/**
 * GET /api/v1/reports/asset-locations (API-SPEC "Asset-location report", "Asset-location
 * report row", "Rules shared by list endpoints"): one `it` per rule. Each test builds its
 * own organization, so every expectation is over the whole report.
 *
 * The rows: one per scanned asset, their fields, and which assets, locations and organizations
 * they show; access.
 */
import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { keys, report, reportTestApp, URL } from './report-scenario.js';

const { app, sql, scenario } = reportTestApp();

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
    const seen = await app().database.db.withOrg(mine.f.org.id, async (tx) => {
      return (await tx.query<{ id: number }>('SELECT id FROM tracked_assets_in_org')).rows;
    });
    expect(ids(seen)).toEqual(new Set([mine.a[1], mine.a[2], mine.a[3], mine.a[4]]));
    expect(ids(seen).has(theirs.a[1])).toBe(false);
    const unset = await app().database.db.system(async (tx) => {
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
