import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { storeSightings } from '../../src/tracking/sightings.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { untilSessions } from '../helpers/database.js';

/**
 * A location may be deleted only while no asset is placed at it, and ingest places
 * assets concurrently. Whichever transaction takes the location's row first, the other
 * must see its outcome: never an asset placed at a deleted location.
 */
describe('location delete racing ingest', () => {
  let t: TestApp;
  let orgId: number;
  beforeAll(async () => {
    t = await buildTestApp();
    orgId = (await t.createOrg()).id;
  });
  afterAll(() => t.close());

  async function fixture() {
    const { rows } = await t.database.db.pool.query<{ loc: number; asset: number }>(
      `WITH l AS (INSERT INTO locations (org_id, external_key, name, valid_from)
                  VALUES ($1, 'L-' || gen_random_uuid(), 'Dock', now() - interval '1 day') RETURNING id),
            a AS (INSERT INTO assets (org_id, external_key, name, valid_from)
                  VALUES ($1, 'A-' || gen_random_uuid(), 'Pallet', now() - interval '1 day') RETURNING id)
       SELECT l.id AS loc, a.id AS asset FROM l, a`,
      [orgId],
    );
    return rows[0]!;
  }

  const placedAt = async (assetId: number) =>
    (
      await t.database.db.pool.query(
        'SELECT location_id FROM assets a LEFT JOIN asset_positions p ON p.asset_id = a.id WHERE a.id = $1',
        [assetId],
      )
    ).rows[0].location_id;

  it('ingest first: the delete waits, then sees the placed asset and answers 409', async () => {
    const { loc, asset } = await fixture();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let stored!: () => void;
    const storedSignal = new Promise<void>((r) => {
      stored = r;
    });
    const ingest = t.database.db.withOrg(orgId, async (tx) => {
      await storeSightings(tx, orgId, [{ assetId: asset, locationId: loc, at: Date.now() }]);
      stored();
      await held;
    });
    await storedSignal;
    const deletion = t.services.locations.delete(cliCaller(orgId), loc).then(
      () => 'deleted',
      (err: { type?: string }) => err.type,
    );
    await untilSessions(t.database.db, "wait_event_type = 'Lock'", 'the delete waiting for the ingest');
    release();
    await ingest;
    expect(await deletion).toBe('conflict');
    expect(await placedAt(asset)).toBe(loc);
  });

  it('delete first: ingest waits, then finds the location deleted and places nothing', async () => {
    const { loc, asset } = await fixture();
    const client = await t.database.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT id FROM locations WHERE id = $1 FOR UPDATE', [loc]);
      const ingest = t.database.db.withOrg(orgId, (tx) =>
        storeSightings(tx, orgId, [{ assetId: asset, locationId: loc, at: Date.now() }]),
      );
      await untilSessions(t.database.db, "wait_event_type = 'Lock'", 'the ingest waiting for the delete');
      await client.query('UPDATE locations SET deleted_at = now() WHERE id = $1', [loc]);
      await client.query('COMMIT');
      expect(await ingest).toBe(0);
    } finally {
      client.release();
    }
    expect(await placedAt(asset)).toBeNull();
  });
});
