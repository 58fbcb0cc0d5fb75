/**
 * Location lists stay index-served. With 20k locations of realistic width in one
 * organization (and 3k in another), EXPLAIN of the exact statements the repository runs
 * (buildListQuery: the page and the total count), planned as the service plans them
 * (inside the organization's transaction, as the restricted role), never reads locations
 * with a Seq Scan, for the default order and for q. Without q the statements are named and
 * planned generically (LocationService.list), so their generic plans are held to the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/pool.js';
import { buildListQuery, type ListFilters, type SqlQuery } from '../../src/locations/repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { settleTables, withSeedClient } from '../helpers/database.js';
import { explainGeneric } from '../helpers/generic-plan.js';
import { describePlan, explainedRoot, nodesOf, type PlanNode } from '../helpers/plan-nodes.js';

const BIG = 20_000;

/**
 * Sites, halls, aisles and bins as an integration would sync them: every row not a
 * multiple of 20 hangs below the one that is; every 50th soft-deleted, every 40th expired,
 * every 10th inactive, a third described; a few carry tags.
 */
const SEED = `
INSERT INTO locations (org_id, external_key, name, description, is_active, valid_from, valid_to,
                       created_at, updated_at, deleted_at, tag_values)
SELECT $1::bigint,
       'LOC-' || lpad(g::text, 7, '0'),
       CASE WHEN g % 20 = 0 THEN 'Hall ' || (g / 20) ELSE 'Aisle ' || (g % 20) || ' bin ' || substr(md5(g::text), 1, 6) END,
       CASE WHEN g % 3 = 0 THEN 'Bay ' || (g % 97) || ', racking by ' || substr(md5((g * 7)::text), 1, 16) END,
       g % 10 <> 0,
       now() - interval '400 days',
       CASE WHEN g % 40 = 0 THEN now() - interval '1 day' END,
       timestamptz '2024-01-01' + g * interval '1 second',
       timestamptz '2024-06-01' + ((g::bigint * 7919) % $2::int) * interval '1 second',
       CASE WHEN g % 50 = 0 THEN now() - interval '2 days' END,
       CASE WHEN g % 7 = 0 THEN 'E280' || upper(substr(md5((g * 3)::text), 1, 20)) ELSE '' END
FROM generate_series(1, $2::int) AS g;
UPDATE locations c SET parent_id = p.id
FROM locations p
WHERE c.org_id = $1 AND p.org_id = $1 AND p.id <> c.id
  AND p.external_key = 'LOC-' || lpad(((substr(c.external_key, 5)::int / 20) * 20)::text, 7, '0');
`;

let t: TestApp;
let orgId: number;

beforeAll(async () => {
  t = await buildTestApp();
  orgId = (await t.createOrg('Big')).id;
  const small = (await t.createOrg('Small')).id;
  await withSeedClient(t.database.url, async (client) => {
    for (const [org, count] of [
      [orgId, BIG],
      [small, 3000],
    ] as const) {
      for (const statement of SEED.split(';').filter((s) => s.trim() !== '')) {
        const params = statement.includes('$2') ? [org, count] : [org];
        await client.query(statement, params);
      }
    }
    await settleTables(client, ['locations']);
  });
}, 300_000);
afterAll(() => t?.close());

async function plan(query: SqlQuery): Promise<PlanNode> {
  return t.database.db.withOrg(orgId, async (tx: Tx) => {
    const { rows } = await tx.query(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
    return explainedRoot(rows);
  });
}

const genericPlan = (query: SqlQuery) =>
  t.database.db.withOrg(orgId, (tx: Tx) => explainGeneric<PlanNode>(tx, query.text, query.values));

/** Asserts no Seq Scan reads locations; returns the plan's nodes. */
async function expectIndexServed(query: SqlQuery, planOf = plan): Promise<PlanNode[]> {
  const root = await planOf(query);
  const onLocations = nodesOf(root).filter((n) => n['Relation Name'] === 'locations');
  expect(onLocations.length, describePlan(root)).toBeGreaterThan(0);
  expect(
    onLocations.map((n) => n['Node Type']),
    describePlan(root),
  ).not.toContain('Seq Scan');
  return nodesOf(root);
}

const scans = (nodes: PlanNode[]) =>
  nodes.filter((n) => n['Node Type'].includes('Scan')).map((n) => `${n['Node Type']} ${n['Index Name']}`);

const base: ListFilters = { include_deleted: false, sort: [], limit: 50, offset: 0 };

describe(`location list plans at ${BIG} locations in one organization`, () => {
  it('the seed is in place', async () => {
    const { rows } = await t.database.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM locations WHERE org_id = $1 AND parent_id IS NOT NULL',
      [orgId],
    );
    expect(rows[0]!.n).toBeGreaterThan(BIG * 0.9);
  });

  it('default order (external_key, id): the page walks locations_external_key_sort', async () => {
    const sql = buildListQuery(orgId, base);
    const page = await expectIndexServed(sql.page);
    expect(page.map((n) => n['Index Name'])).toContain('locations_external_key_sort');
  });

  it('default order: the count is an index-only scan of locations_liveness', async () => {
    for (const change of [{}, { is_active: true }, { include_deleted: true }]) {
      const nodes = await expectIndexServed(buildListQuery(orgId, { ...base, ...change }).count);
      expect(scans(nodes)).toEqual(['Index Only Scan locations_liveness']);
    }
  });

  it.each([
    ['a name fragment', 'hall 42'],
    ['a key fragment', 'loc-00123'],
    ['a tag value fragment', 'e280a'],
    ['three characters', 'x7q'],
  ])('q of %s: the page and the count use the trigram index (locations_search)', async (_name, q) => {
    const sql = buildListQuery(orgId, { ...base, q });
    for (const query of [sql.page, sql.count]) {
      const nodes = await expectIndexServed(query);
      expect(nodes.map((n) => n['Index Name'])).toContain('locations_search');
    }
  });

  const filtered: [string, Partial<ListFilters>][] = [
    ['sort=name', { sort: [{ field: 'name', desc: false }] }],
    ['sort=-created_at', { sort: [{ field: 'created_at', desc: true }] }],
    ['parent_id filter', { parent_id: [20] }],
    ['external_key filter', { external_key: ['LOC-0000042'] }],
    ['parent_external_key filter', { parent_external_key: ['LOC-0000020', 'LOC-0000040'] }],
  ];

  it.each(filtered)('%s: the page and the count are index-served', async (_name, change) => {
    const sql = buildListQuery(orgId, { ...base, ...change });
    await expectIndexServed(sql.page);
    await expectIndexServed(sql.count);
  });

  it.each([
    ['default order', {}],
    ['sort=-external_key', { sort: [{ field: 'external_key', desc: true }] }],
    ['is_active=false', { is_active: false }],
    ['include_deleted=true', { include_deleted: true }],
    ['page far in', { offset: 5000 }],
    ...filtered,
  ] as [string, Partial<ListFilters>][])(
    '%s: the generic plans of the named page and count are index-served',
    async (_name, change) => {
      const sql = buildListQuery(orgId, { ...base, ...change });
      const page = await expectIndexServed(sql.page, genericPlan);
      if (!change.sort && !change.parent_id && !change.external_key && !change.parent_external_key)
        expect(page.map((n) => n['Index Name'])).toContain('locations_external_key_sort');
      await expectIndexServed(sql.count, genericPlan);
    },
  );
});
