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

  /** The asset's position, which must be its one row, in comparable form. */
  const onlyPosition = async (assetId: number) => {
    const { rows } = await t.database.db.pool.query(
      `SELECT location_id, last_seen_at, valid_from, valid_to, deleted_at, xmin::text AS version
       FROM asset_positions WHERE asset_id = $1`,
      [assetId],
    );
    expect(rows).toHaveLength(1);
    const r = rows[0];
    return {
      locationId: Number(r.location_id),
      lastSeenAt: r.last_seen_at.getTime(),
      validFrom: r.valid_from.toISOString(),
      validTo: r.valid_to?.toISOString() ?? null,
      deletedAt: r.deleted_at,
      version: r.version as string,
    };
  };

  const at = (s: number) => Date.parse('2026-06-01T00:00:00Z') + s * 1000;

  it('a first sighting inserts the position with the asset validity', async () => {
    const asset = await newAsset('2027-01-01T00:00:00Z');
    expect(await store([{ assetId: asset, locationId: locations[0]!, at: at(0) }])).toBe(1);
    expect(await onlyPosition(asset)).toMatchObject({
      locationId: locations[0],
      lastSeenAt: at(0),
      validFrom: '2026-01-01T00:00:00.000Z',
      validTo: '2027-01-01T00:00:00.000Z',
      deletedAt: null,
    });
  });

  it('later sightings update the one position: a read in place, then a move', async () => {
    const asset = await newAsset('2027-01-01T00:00:00Z');
    await store([{ assetId: asset, locationId: locations[0]!, at: at(0) }]);
    const first = await onlyPosition(asset);
    await store([{ assetId: asset, locationId: locations[0]!, at: at(5) }]);
    const extended = await onlyPosition(asset);
    expect(extended.version).not.toBe(first.version);
    expect(extended).toMatchObject({ locationId: locations[0], lastSeenAt: at(5) });
    await store([{ assetId: asset, locationId: locations[1]!, at: at(9) }]);
    // The copy of the validity is the asset's still (not written by the update).
    expect(await onlyPosition(asset)).toMatchObject({
      locationId: locations[1],
      lastSeenAt: at(9),
      validTo: '2027-01-01T00:00:00.000Z',
    });
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
    expect(await onlyPosition(placed)).toMatchObject({ locationId: locations[2], lastSeenAt: at(3) });
    expect(await onlyPosition(fresh)).toMatchObject({
      locationId: locations[1],
      lastSeenAt: at(4),
      validTo: '2028-01-01T00:00:00.000Z',
    });
  });

  it('an asset with stays but no position gets one, with its validity', async () => {
    const asset = await newAsset('2029-01-01T00:00:00Z');
    await store([{ assetId: asset, locationId: locations[0]!, at: at(0) }]);
    // As a database whose positions were lost or never written: the stay is there, the position not.
    await t.database.db.pool.query('DELETE FROM asset_positions WHERE asset_id = $1', [asset]);
    expect(await store([{ assetId: asset, locationId: locations[1]!, at: at(7) }])).toBe(1);
    expect(await onlyPosition(asset)).toMatchObject({
      locationId: locations[1],
      lastSeenAt: at(7),
      validFrom: '2026-01-01T00:00:00.000Z',
      validTo: '2029-01-01T00:00:00.000Z',
    });
    const { rows: stays } = await t.database.db.pool.query(
      'SELECT count(*)::int AS n FROM stays WHERE asset_id = $1',
      [asset],
    );
    expect(stays[0].n).toBe(2);
  });
});
