/**
 * Asset lists stay index-served at scale. With 50k assets of realistic width in one
 * organization and 3k in another, EXPLAIN of the exact statements the repository runs
 * (buildAssetListSql: the page and the total count; buildListPageSql, which runs them as
 * one statement with the page's tags), planned as the service plans them
 * (inside the organization's transaction, as the restricted role), never reads assets
 * with a Seq Scan. bench/list-assets.mjs times the same statements at a million assets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AssetListFilter,
  buildAssetListSql,
  buildListPageSql,
  type SqlQuery,
} from '../../src/assets/repository-list.js';
import { buildSearchPageSql } from '../../src/assets/repository-search.js';
import { containsPattern } from '../../src/master-data/list-query.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { explainGeneric } from '../helpers/generic-plan.js';
import { describePlan, explainedRoot, nodesOf, type PlanNode } from '../helpers/plan-nodes.js';
import { seedCatalogue } from './seeded-catalogue.js';

const BIG = 50_000;
const base: AssetListFilter = { includeDeleted: false, sort: [], limit: 50, offset: 0 };
const by = (field: string, desc: boolean) => ({ sort: [{ field, desc }] });

describe('asset list plans at 50k assets in one organization', () => {
  let t: TestApp;
  let orgId: number;

  beforeAll(async () => {
    t = await buildTestApp();
    const seeded = await seedCatalogue(t, {
      names: ['Big', 'Small'],
      counts: [BIG, 3000],
      more: (c) => c.query('ANALYZE locations').then(() => undefined),
    });
    orgId = seeded.org.id;
  }, 300_000);
  afterAll(() => t?.close());

  async function plan(query: SqlQuery): Promise<PlanNode> {
    return t.database.db.withOrg(orgId, async (tx) => {
      const { rows } = await tx.query(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
      return explainedRoot(rows);
    });
  }

  const genericPlan = (query: SqlQuery) =>
    t.database.db.withOrg(orgId, (tx) => explainGeneric<PlanNode>(tx, query.text, query.values));

  async function expectIndexServed(query: SqlQuery, planOf = plan): Promise<PlanNode[]> {
    const root = await planOf(query);
    const onAssets = nodesOf(root).filter((n) => n['Relation Name'] === 'assets');
    expect(onAssets.length, describePlan(root)).toBeGreaterThan(0);
    expect(
      onAssets.map((n) => n['Node Type']),
      describePlan(root),
    ).not.toContain('Seq Scan');
    return onAssets;
  }

  const cases: [string, Partial<AssetListFilter>][] = [
    ['default order (external_key, id)', {}],
    ...['external_key', 'name', 'created_at', 'updated_at'].flatMap(
      (f): [string, Partial<AssetListFilter>][] => [
        [`sort=${f}`, by(f, false)],
        [`sort=-${f}`, by(f, true)],
      ],
    ),
    ['q of 3 characters', { searchPattern: containsPattern('7f3') }],
    ['q of 4 characters', { searchPattern: containsPattern('7F3A') }],
    ['q and sort=-name', { searchPattern: containsPattern('c0ffe'), ...by('name', true) }],
    ['q and sort=updated_at', { searchPattern: containsPattern('be4d'), ...by('updated_at', false) }],
    ['external_key filter', { externalKeys: ['FL-0000042', 'FL-0000043'] }],
    ['location_id filter', { locationIds: [1] }],
    ['location_external_key filter', { locationKeys: ['DOCK-1'] }],
    ['is_active=false', { isActive: false }],
    ['include_deleted=true', { includeDeleted: true }],
    ['include_deleted=true and sort=-updated_at', { includeDeleted: true, ...by('updated_at', true) }],
  ];

  it.each(cases)('%s: the page and the count are index-served', async (_name, change) => {
    const sql = buildAssetListSql(orgId, { ...base, ...change });
    await expectIndexServed(sql.page);
    await expectIndexServed(sql.count);
  });

  it.each(cases.filter(([, change]) => change.searchPattern === undefined))(
    '%s: the generic plan of the named statements is index-served too',
    async (_name, change) => {
      const sql = buildAssetListSql(orgId, { ...base, ...change });
      await expectIndexServed(sql.page, genericPlan);
      await expectIndexServed(sql.count, genericPlan);
    },
  );

  it.each(cases.filter(([, change]) => change.searchPattern === undefined))(
    '%s: the one statement of the page, its tags and its total is index-served, in its generic plan too',
    async (_name, change) => {
      const sql = buildListPageSql(orgId, { ...base, ...change });
      for (const planOf of [plan, genericPlan]) await expectIndexServed(sql, planOf);
    },
  );

  it.each(cases.filter(([, change]) => change.searchPattern !== undefined))(
    '%s: the named search statement finds its matches through assets_search, in its generic plan too',
    async (_name, change) => {
      const sql = buildSearchPageSql(orgId, { ...base, ...change });
      for (const planOf of [plan, genericPlan]) {
        await expectIndexServed(sql, planOf);
        const root = await planOf(sql);
        expect(
          nodesOf(root).map((n) => n['Index Name']),
          describePlan(root),
        ).toContain('assets_search');
      }
    },
  );

  it('the count without filters reads the counted rows and the assets outside their window only', async () => {
    for (const change of [{}, { isActive: true }]) {
      const query = buildAssetListSql(orgId, { ...base, ...change }).count;
      const nodes = await expectIndexServed(query);
      // Future-dated by assets_liveness, expired by assets_expiry: range scans, not every live row.
      expect(nodes.map((n) => n['Index Name']).sort()).toEqual(['assets_expiry', 'assets_liveness']);
      const root = await plan(query);
      expect(
        nodesOf(root).map((n) => n['Index Name']),
        describePlan(root),
      ).toContain('asset_count_deltas_org');
    }
  });

  it('the count with deleted assets is an index-only scan (assets_liveness)', async () => {
    const nodes = await expectIndexServed(buildAssetListSql(orgId, { ...base, includeDeleted: true }).count);
    expect(nodes.map((n) => `${n['Node Type']} ${n['Index Name']}`)).toEqual([
      'Index Only Scan assets_liveness',
    ]);
  });

  it('q uses the trigram index (assets_search) for the count', async () => {
    const root = await plan(
      buildAssetListSql(orgId, { ...base, searchPattern: containsPattern('7f3') }).count,
    );
    expect(
      nodesOf(root).map((n) => n['Index Name']),
      describePlan(root),
    ).toContain('assets_search');
  });

  it('a q matching nearly every asset walks a sort index for the page; its count reads every match', async () => {
    const sql = buildAssetListSql(orgId, { ...base, searchPattern: containsPattern('lift') });
    const page = await expectIndexServed(sql.page);
    expect(page.map((n) => n['Index Name'])).toContain('assets_external_key_sort');
    // Counting ~all rows visits each of them whatever the path; the planner rightly reads
    // the table in order, so this is the one count not held to the rule above.
    const count = nodesOf(await plan(sql.count)).filter((n) => n['Relation Name'] === 'assets');
    expect(count.reduce((sum, n) => sum + n['Plan Rows'], 0)).toBeGreaterThan(BIG / 2);
  });
});
