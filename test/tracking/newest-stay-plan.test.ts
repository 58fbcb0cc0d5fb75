/**
 * Ingest reads each asset's newest stay for every batch that sees the asset. A moving asset's
 * history grows without end, so that read must not grow with it: the statement descends the
 * stays index once per asset, and an asset of thousands of stays costs what one of a single
 * stay does. Checked on the plan's row counts (EXPLAIN ANALYZE), not on time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intArray } from '../../src/db/array-literals.js';
import { lockAssets, NEWEST_STAYS, refreshCurrentLocation } from '../../src/tracking/repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ingestFixture, unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

describe('the newest stay of each asset', () => {
  it('is found by one index descent per asset, however long its history', async () => {
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const travelled = await f.asset(unique('T'));
    const once = await f.asset(unique('T'));
    const start = Date.now() - 10_000 * 60_000;
    // 3,000 stays, alternating between two places a minute apart, the newest at the shelf.
    await t.database.db.pool.query(
      `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
       SELECT $1, $2, CASE WHEN g % 2 = 0 THEN $3::bigint ELSE $4::bigint END,
              to_timestamp(($5::bigint + g * 60000) / 1000.0), to_timestamp(($5::bigint + g * 60000 + 30000) / 1000.0)
       FROM generate_series(1, 3000) g`,
      [f.orgId, travelled, dock, shelf, start],
    );
    await t.database.db.pool.query(
      `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at) VALUES ($1, $2, $3, now(), now())`,
      [f.orgId, once, dock],
    );
    await t.database.db.pool.query('ANALYZE stays');

    const plan = await t.database.db.withOrg(f.orgId, async (tx) => {
      const { rows } = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${NEWEST_STAYS}`,
        [f.orgId, intArray([travelled, once])],
      );
      return rows[0]!['QUERY PLAN'][0].Plan;
    });
    const staysRead = nodes(plan)
      .filter((n) => n['Relation Name'] === 'stays')
      .reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    expect(staysRead).toBe(2);

    const { newest } = await t.database.db.withOrg(f.orgId, (tx) =>
      lockAssets(tx, f.orgId, [travelled, once]),
    );
    expect(newest.get(travelled)).toMatchObject({
      locationId: dock,
      lastSeenAt: start + 3000 * 60_000 + 30_000,
    });
    expect(newest.get(once)).toMatchObject({ locationId: dock });
  });

  it('is what the current location is refreshed from after late reads', async () => {
    const f = await ingestFixture(t);
    const [dock, shelf] = [await f.location(), await f.location()];
    const asset = await f.asset(unique('T'));
    const start = Date.now() - 1_000 * 60_000;
    await t.database.db.pool.query(
      `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
       SELECT $1, $2, CASE WHEN g % 2 = 0 THEN $3::bigint ELSE $4::bigint END,
              to_timestamp(($5::bigint + g * 60000) / 1000.0), to_timestamp(($5::bigint + g * 60000 + 30000) / 1000.0)
       FROM generate_series(1, 501) g`,
      [f.orgId, asset, dock, shelf, start],
    );
    // The list names the asset twice: it is refreshed once.
    const changed = await t.database.db.withOrg(f.orgId, (tx) =>
      refreshCurrentLocation(tx, f.orgId, [asset, asset]),
    );
    expect(changed).toEqual([{ assetId: asset, locationId: shelf, startedAt: start + 501 * 60_000 }]);
    const { rows } = await t.database.db.pool.query<{ location_id: number; last_seen_ms: number }>(
      `SELECT location_id, floor(extract(epoch FROM last_seen_at) * 1000)::bigint AS last_seen_ms
       FROM asset_positions WHERE asset_id = $1`,
      [asset],
    );
    expect(rows.map((r) => [Number(r.location_id), Number(r.last_seen_ms)])).toEqual([
      [shelf, start + 501 * 60_000 + 30_000],
    ]);
  });
});
