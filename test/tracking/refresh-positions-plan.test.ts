/**
 * Ingest's transactions look up and write batches of rows by key, planned without hash and
 * merge joins (KEYED_BATCHES), and their work must follow the batch, not the table: checked
 * on the plans' row counts (EXPLAIN ANALYZE, as the service's restricted role), not on time.
 * After late reads the positions of their assets are refreshed from the newest stays in one
 * statement, which once joined the assets to the changed ones pairwise: a million
 * comparisons for a thousand assets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYED_BATCHES } from '../../src/db/app-connection.js';
import { int8Array } from '../../src/db/binary-arrays.js';
import { REFRESH_POSITIONS, refreshCurrentLocation } from '../../src/tracking/positions-repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { explainedRoot, type PlanNode, rowsHandled } from '../helpers/plan-nodes.js';
import { ingestFixture, unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

type Change = { assetId: number };
const byAsset = <T extends Change>(changes: T[]): T[] => [...changes].sort((a, b) => a.assetId - b.assetId);

/** The plan of `text` run (EXPLAIN ANALYZE) in an ingest transaction of the organization. */
async function keyedPlan(orgId: number, text: string, values: unknown[]): Promise<PlanNode> {
  return t.database.db.withOrg(orgId, async (tx) => {
    await tx.query(KEYED_BATCHES);
    const { rows } = await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
    return explainedRoot(rows);
  });
}

/** `count` assets of the organization, each with one stay at `place` starting at `at`. */
async function assetsAt(orgId: number, place: number, at: number, count: number): Promise<number[]> {
  const { rows } = await t.database.db.pool.query<{ id: number }>(
    `INSERT INTO assets (org_id, external_key, name, valid_from)
     SELECT $1, $2 || g, 'asset ' || g, now() - interval '1 day' FROM generate_series(1, $3) g
     RETURNING id`,
    [orgId, unique('REFRESH-'), count],
  );
  const ids = rows.map((r) => Number(r.id));
  await staysAt(orgId, ids, place, at);
  return ids;
}

/** A stay of each of `ids` at `place`, starting (and last seen) at `at`. */
async function staysAt(orgId: number, ids: number[], place: number, at: number): Promise<void> {
  await t.database.db.pool.query(
    `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
     SELECT $1, id, $3, to_timestamp($4 / 1000.0), to_timestamp($4 / 1000.0) FROM unnest($2::bigint[]) AS id`,
    [orgId, int8Array(ids), place, at],
  );
}

describe('refreshing positions after late reads', () => {
  it('answers the assets whose position changed, with their newest stay', async () => {
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const at = Date.now() - 3_600_000;
    const ids = await assetsAt(f.orgId, dock, at, 6);
    const first = await t.database.db.withOrg(f.orgId, (tx) => refreshCurrentLocation(tx, f.orgId, ids));
    expect(byAsset(first)).toEqual(ids.map((assetId) => ({ assetId, locationId: dock, startedAt: at })));

    // Two of them moved on to the shelf; the rest are where their positions say.
    const moved = [ids[1]!, ids[4]!];
    await staysAt(f.orgId, moved, shelf, at + 60_000);
    const second = await t.database.db.withOrg(f.orgId, (tx) =>
      refreshCurrentLocation(tx, f.orgId, [...ids, ...ids]),
    );
    expect(byAsset(second)).toEqual(
      moved.map((assetId) => ({ assetId, locationId: shelf, startedAt: at + 60_000 })),
    );
    const again = await t.database.db.withOrg(f.orgId, (tx) => refreshCurrentLocation(tx, f.orgId, ids));
    expect(again).toEqual([]);
  });

  it('handles rows in proportion to the assets, not to assets times changed ones', async () => {
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const at = Date.now() - 3_600_000;
    const count = 400;
    const ids = await assetsAt(f.orgId, dock, at, count);
    await t.database.db.withOrg(f.orgId, (tx) => refreshCurrentLocation(tx, f.orgId, ids));
    const moved = ids.filter((_, i) => i % 2 === 0);
    await staysAt(f.orgId, moved, shelf, at + 60_000);
    await t.database.db.pool.query('ANALYZE stays, asset_positions');
    const plan = await keyedPlan(f.orgId, REFRESH_POSITIONS, [f.orgId, int8Array(ids)]);
    // A pairwise join handles count x moved (80,000) rows; each asset here takes a handful.
    expect(rowsHandled(plan)).toBeLessThan(20 * count);
  });
});
