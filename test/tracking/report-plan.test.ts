/**
 * The asset-location report stays index-served at a large organization: the exact
 * statements reportSql() builds are EXPLAINed, as the service's restricted role inside
 * the organization's transaction, over ~30k scanned assets of one organization beside
 * another organization's, and no plan may read the assets table sequentially.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReportFilter, reportSql, type SqlQuery } from '../../src/tracking/queries.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { settleTables } from '../helpers/database.js';
import { explainGeneric } from '../helpers/generic-plan.js';
import { describePlan, explainedRoot, nodesOf, type PlanNode } from '../helpers/plan-nodes.js';

let t: TestApp;
let orgId: number;
let locationId: number;

beforeAll(async () => {
  t = await buildTestApp();
  const org = await t.createOrg('Big');
  const other = await t.createOrg('Other');
  orgId = org.id;
  const pool = t.database.db.pool;
  for (const [id, assets, scannedEvery] of [
    [org.id, 32_000, 1],
    [other.id, 30_000, 2],
  ] as const) {
    await pool.query(
      `INSERT INTO locations (org_id, external_key, name, valid_from)
       SELECT $1, 'LOC-' || g, 'Location ' || g, now() - interval '1 day' FROM generate_series(1, 300) g`,
      [id],
    );
    await pool.query(
      `WITH a AS (
         INSERT INTO assets (org_id, external_key, name, description, valid_from, tag_values)
         SELECT $1, 'A-' || g, 'Asset ' || g, 'description ' || g, now() - interval '1 day', 'EPC' || g
         FROM generate_series(1, $2) g RETURNING id, substr(external_key, 3)::int AS g)
       INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at)
       SELECT $1, id, (SELECT min(id) FROM locations WHERE org_id = $1) + g % 300, now() - g * interval '1 second'
       FROM a WHERE g % $3 = 0`,
      [id, assets, scannedEvery],
    );
  }
  // VACUUM as autovacuum would: it sets the visibility map, without which no index-only
  // scan is costed as one. ANALYZE gives the planner the statistics.
  locationId = (
    await pool.query<{ id: number }>(
      `SELECT id FROM locations WHERE org_id = $1 AND external_key = 'LOC-9'`,
      [org.id],
    )
  ).rows[0]!.id;
  await settleTables(pool, ['assets', 'asset_positions', 'locations']);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

async function explain(sql: SqlQuery): Promise<PlanNode> {
  return t.database.db.withOrg(orgId, async (tx) => {
    const { rows } = await tx.query({
      text: `EXPLAIN (FORMAT JSON) ${sql.text}`,
      values: sql.values,
    });
    return explainedRoot(rows);
  });
}

async function expectIndexServed(filter: Partial<ReportFilter>): Promise<void> {
  const full: ReportFilter = { includeDeleted: false, sort: [], ...filter };
  const sql = reportSql(orgId, full, { limit: 50, offset: 0 });
  // Without q the statements are named (src/tracking/queries.ts): their generic plan too.
  const generic = (s: SqlQuery) =>
    t.database.db.withOrg(orgId, (tx) => explainGeneric<PlanNode>(tx, s.text, s.values));
  const planners = full.q === undefined ? { custom: explain, generic } : { custom: explain };
  for (const [name, statement] of Object.entries(sql)) {
    for (const [kind, planOf] of Object.entries(planners)) {
      const plan = await planOf(statement);
      const seq = nodesOf(plan).filter(
        (n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'assets',
      );
      expect(seq, `${name} (${kind} plan): ${describePlan(plan)}`).toEqual([]);
    }
  }
}

describe('asset-location report plans at ~30k scanned assets', () => {
  it('default sort (-asset_last_seen) is index-served', async () => {
    await expectIndexServed({});
  });

  for (const field of ['asset_last_seen', 'asset_external_key', 'location_external_key']) {
    for (const desc of [false, true]) {
      it(`sort=${desc ? '-' : ''}${field} is index-served`, async () => {
        await expectIndexServed({ sort: [{ field, desc }] });
      });
    }
  }

  it('q of three or more characters is index-served', async () => {
    await expectIndexServed({ q: '1234' });
    await expectIndexServed({ q: 'set 99' });
    await expectIndexServed({ q: '123' });
    await expectIndexServed({ q: 'EPC', sort: [{ field: 'location_external_key', desc: false }] });
  });

  it('filters and include_deleted are index-served', async () => {
    await expectIndexServed({ assetIds: [5, 6, 7] });
    await expectIndexServed({ assetKeys: ['A-5', 'A-6'] });
    await expectIndexServed({ locationKeys: ['LOC-7'] });
    await expectIndexServed({ locationIds: [locationId] });
    await expectIndexServed({ includeDeleted: true });
    await expectIndexServed({
      includeDeleted: true,
      sort: [
        { field: 'asset_external_key', desc: false },
        { field: 'asset_last_seen', desc: true },
      ],
    });
  });
});
