/**
 * An asset's current position and its move events after batches that reach into its past.
 * Where placing late reads in memory reaches the asset's newest stay, the position is
 * written from memory (placeSightings); otherwise it is read back from the stays. Either
 * way the position must be the newest stay, and the move events must chain from where the
 * asset was to where it is.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sighting, storeSightings } from '../../src/tracking/sightings.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { subscribeToMoves } from '../helpers/move-subscription.js';
import { ingestFixture, unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface Newest {
  location: number;
  startedAt: number;
  lastSeenAt: number;
}

async function newestStays(orgId: number, assets: number[]): Promise<Map<number, Newest>> {
  const { rows } = await t.database.db.pool.query<{
    asset_id: string;
    location_id: string;
    started_at: Date;
    last_seen_at: Date;
  }>(
    `SELECT DISTINCT ON (asset_id) asset_id, location_id, started_at, last_seen_at FROM stays
     WHERE org_id = $1 AND asset_id = ANY($2::bigint[]) ORDER BY asset_id, started_at DESC`,
    [orgId, assets],
  );
  return new Map(
    rows.map((r) => [
      Number(r.asset_id),
      {
        location: Number(r.location_id),
        startedAt: r.started_at.getTime(),
        lastSeenAt: r.last_seen_at.getTime(),
      },
    ]),
  );
}

async function positions(
  orgId: number,
  assets: number[],
): Promise<Map<number, { location: number; lastSeenAt: number }>> {
  const { rows } = await t.database.db.pool.query<{
    asset_id: string;
    location_id: string;
    last_seen_at: Date;
  }>(
    'SELECT asset_id, location_id, last_seen_at FROM asset_positions WHERE org_id = $1 AND asset_id = ANY($2::bigint[])',
    [orgId, assets],
  );
  return new Map(
    rows.map((r) => [
      Number(r.asset_id),
      { location: Number(r.location_id), lastSeenAt: r.last_seen_at.getTime() },
    ]),
  );
}

async function moves(orgId: number, asset: number) {
  const { rows } = await t.database.db.pool.query<{
    payload: { from_location_id: number | null; location_id: number };
  }>(
    `SELECT payload FROM events WHERE org_id = $1 AND subject = $2 AND type IN ('asset.first_seen', 'asset.moved')
     ORDER BY id`,
    [orgId, `asset:${asset}`],
  );
  return rows.map((r) => r.payload);
}

describe('positions after late reads', () => {
  it('the position is the newest stay and the move events chain to it, whatever order the reads come in', async () => {
    const f = await ingestFixture(t);
    await subscribeToMoves(t.database.db, f.orgId);
    const locations = [await f.location(), await f.location(), await f.location()];
    const base = Date.now() - 3_600_000;
    const read = fc.record({
      asset: fc.nat({ max: 1 }),
      location: fc.nat({ max: 2 }),
      second: fc.nat({ max: 40 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(read, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
        async (batches) => {
          const assets = [await f.asset(unique('T')), await f.asset(unique('T'))];
          for (const batch of batches) {
            const sightings: Sighting[] = batch.map((r) => ({
              assetId: assets[r.asset]!,
              locationId: locations[r.location]!,
              at: base + r.second * 1000,
            }));
            await t.database.db.withOrg(f.orgId, (tx) => storeSightings(tx, f.orgId, sightings));
            const newest = await newestStays(f.orgId, assets);
            const placed = await positions(f.orgId, assets);
            for (const asset of assets) {
              const stay = newest.get(asset);
              expect(placed.get(asset)).toEqual(
                stay ? { location: stay.location, lastSeenAt: stay.lastSeenAt } : undefined,
              );
              const chain = await moves(f.orgId, asset);
              let at: number | null = null;
              for (const m of chain) {
                expect(m.from_location_id).toBe(at);
                at = m.location_id;
              }
              expect(at).toBe(stay?.location ?? null);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('two reads at one instant at two locations, before the stored stay, are stored (the stay moves 1 ms on first)', async () => {
    // Once a reader message that failed on the unique (asset, started_at) key, again on
    // every redelivery: the stay was moved off the instant after the new one took it.
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const asset = await f.asset(unique('T'));
    const base = Date.now() - 3_600_000;
    const store = (sightings: Array<[number, number]>) =>
      t.database.db.withOrg(f.orgId, (tx) =>
        storeSightings(
          tx,
          f.orgId,
          sightings.map(([locationId, ms]) => ({ assetId: asset, locationId, at: base + ms })),
        ),
      );
    await store([[dock, 4000]]);
    expect(
      await store([
        [dock, 3000],
        [shelf, 3000],
      ]),
    ).toBe(2);
    const { rows } = await t.database.db.pool.query<{ location_id: string; started: string; seen: string }>(
      `SELECT location_id, (extract(epoch FROM started_at) * 1000)::bigint - $2 AS started,
              (extract(epoch FROM last_seen_at) * 1000)::bigint - $2 AS seen
       FROM stays WHERE org_id = $1 AND asset_id = $3 ORDER BY started_at`,
      [f.orgId, base, asset],
    );
    expect(rows.map((r) => [Number(r.location_id), Number(r.started), Number(r.seen)])).toEqual([
      [shelf, 3000, 3000],
      [dock, 3001, 4000],
    ]);
    expect(await positions(f.orgId, [asset])).toEqual(
      new Map([[asset, { location: dock, lastSeenAt: base + 4000 }]]),
    );
  });
});
