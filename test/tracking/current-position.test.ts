import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeSightings } from '../../src/tracking/sightings.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * The current position ingest keeps per asset (setCurrentLocations): inserted with the
 * asset's validity at its first sighting, updated afterwards (one row per asset, the
 * validity copy left as it is), and inserted all the same where an asset has stays but no
 * position.
 */
describe('current position written by ingest', () => {
  let t: TestApp;
  let orgId: number;
  let locations: number[];
  beforeAll(async () => {
    t = await buildTestApp();
    orgId = (await t.createOrg()).id;
    const { rows } = await t.database.db.pool.query<{ id: number }>(
      `INSERT INTO locations (org_id, external_key, name, valid_from)
       SELECT $1, 'L-' || g || '-' || gen_random_uuid(), 'Dock ' || g, now() - interval '1 day'
       FROM generate_series(1, 3) g RETURNING id`,
      [orgId],
    );
    locations = rows.map((r) => Number(r.id));
  });
  afterAll(() => t.close());

  const newAsset = async (validTo: string | null = null) =>
    Number(
      (
        await t.database.db.pool.query<{ id: number }>(
          `INSERT INTO assets (org_id, external_key, name, valid_from, valid_to)
           VALUES ($1, 'A-' || gen_random_uuid(), 'Pallet', timestamptz '2026-01-01T00:00:00Z', $2) RETURNING id`,
          [orgId, validTo],
        )
      ).rows[0]!.id,
    );

  const store = (sightings: Array<{ assetId: number; locationId: number; at: number }>) =>
    t.database.db.withOrg(orgId, (tx) => storeSightings(tx, orgId, sightings));

  const position = async (assetId: number) => {
    const { rows } = await t.database.db.pool.query(
      `SELECT location_id, last_seen_at, valid_from, valid_to, deleted_at, xmin::text AS version
       FROM asset_positions WHERE asset_id = $1`,
      [assetId],
    );
    return rows;
  };

  const at = (s: number) => Date.parse('2026-06-01T00:00:00Z') + s * 1000;

  it('a first sighting inserts the position with the asset validity', async () => {
    const asset = await newAsset('2027-01-01T00:00:00Z');
    expect(await store([{ assetId: asset, locationId: locations[0]!, at: at(0) }])).toBe(1);
    const rows = await position(asset);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].location_id)).toBe(locations[0]);
    expect(rows[0].last_seen_at.getTime()).toBe(at(0));
    expect(rows[0].valid_from.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(rows[0].valid_to.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(rows[0].deleted_at).toBeNull();
  });

  it('later sightings update the one position: a read in place, then a move', async () => {
    const asset = await newAsset('2027-01-01T00:00:00Z');
    await store([{ assetId: asset, locationId: locations[0]!, at: at(0) }]);
    const first = (await position(asset))[0];
    await store([{ assetId: asset, locationId: locations[0]!, at: at(5) }]);
    const extended = await position(asset);
    expect(extended).toHaveLength(1);
    expect(extended[0].version).not.toBe(first.version);
    expect(Number(extended[0].location_id)).toBe(locations[0]);
    expect(extended[0].last_seen_at.getTime()).toBe(at(5));
    await store([{ assetId: asset, locationId: locations[1]!, at: at(9) }]);
    const moved = await position(asset);
    expect(moved).toHaveLength(1);
    expect(Number(moved[0].location_id)).toBe(locations[1]);
    expect(moved[0].last_seen_at.getTime()).toBe(at(9));
    // The copy of the validity is the asset's still (not written by the update).
    expect(moved[0].valid_to.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('one batch of first sightings and placed assets writes each its way', async () => {
    const placed = await newAsset();
    const fresh = await newAsset('2028-01-01T00:00:00Z');
    await store([{ assetId: placed, locationId: locations[0]!, at: at(0) }]);
    expect(
      await store([
        { assetId: placed, locationId: locations[2]!, at: at(3) },
        { assetId: fresh, locationId: locations[1]!, at: at(4) },
      ]),
    ).toBe(2);
    const [p] = await position(placed);
    const [f] = await position(fresh);
    expect([Number(p.location_id), p.last_seen_at.getTime()]).toEqual([locations[2], at(3)]);
    expect([Number(f.location_id), f.last_seen_at.getTime()]).toEqual([locations[1], at(4)]);
    expect(f.valid_to.toISOString()).toBe('2028-01-01T00:00:00.000Z');
  });

  it('an asset with stays but no position gets one, with its validity', async () => {
    const asset = await newAsset('2029-01-01T00:00:00Z');
    await store([{ assetId: asset, locationId: locations[0]!, at: at(0) }]);
    // As a database whose positions were lost or never written: the stay is there, the position not.
    await t.database.db.pool.query('DELETE FROM asset_positions WHERE asset_id = $1', [asset]);
    expect(await store([{ assetId: asset, locationId: locations[1]!, at: at(7) }])).toBe(1);
    const rows = await position(asset);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].location_id)).toBe(locations[1]);
    expect(rows[0].last_seen_at.getTime()).toBe(at(7));
    expect(rows[0].valid_from.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(rows[0].valid_to.toISOString()).toBe('2029-01-01T00:00:00.000Z');
    const { rows: report } = await t.database.db.pool.query(
      `SELECT count(*)::int AS n FROM stays WHERE asset_id = $1`,
      [asset],
    );
    expect(report[0].n).toBe(2);
  });
});
