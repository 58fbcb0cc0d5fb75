/**
 * How GET /api/v1/locations plans its statements: without q the page and the count are
 * named and planned generically, once per connection (LIMIT and OFFSET are parameters, so
 * PostgreSQL would otherwise price the generic plan at a tenth of the table and plan the
 * page on every call: docs/performance.md, step 30); a text search's statements stay
 * unnamed, planned for their pattern. test/locations/explain.test.ts holds those generic
 * plans to indexes at 20,000 locations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/pool.js';
import { prepared } from '../../src/db/prepared.js';
import { buildListQuery, type ListFilters } from '../../src/locations/repository.js';
import { LocationService } from '../../src/locations/service.js';
import { buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';
import { withSeedClient } from '../helpers/database.js';

const COUNT = 120;
const base: ListFilters = { include_deleted: false, sort: [], limit: 50, offset: 0 };

let t: TestApp;
let org: TestOrg;

beforeAll(async () => {
  t = await buildTestApp();
  org = await t.createOrg();
  await withSeedClient(t.database.url, (client) =>
    client.query(
      `INSERT INTO locations (org_id, external_key, name)
       SELECT $1, 'LOC-' || lpad(g::text, 4, '0'), 'Bay ' || g FROM generate_series(1, $2::int) g`,
      [org.id, COUNT],
    ),
  );
});
afterAll(() => t?.close());

describe('GET /api/v1/locations statements', () => {
  it('without q: the page and the count are planned once per connection, generically', async () => {
    const one = createDatabase(t.database.url, { max: 1 });
    try {
      const service = new LocationService(one);
      // Full pages, so the count runs too (a short page tells its own total).
      for (const offset of [0, 50, 10, 0, 20, 30, 5, 60, 0, 40]) {
        const page = await service.list(org.id, { limit: 50, offset });
        expect(page.total).toBe(COUNT);
        expect(page.data.map((l) => l.external_key)[0]).toBe(`LOC-${String(offset + 1).padStart(4, '0')}`);
      }
      const sql = buildListQuery(org.id, base);
      const [pageName, countName] = [prepared(sql.page.text).name, prepared(sql.count.text).name];
      const plans = await one.withOrg(org.id, async (tx) => {
        const { rows } = await tx.query<{ name: string; generic_plans: number; custom_plans: number }>(
          'SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name = ANY($1) ORDER BY name',
          [[pageName, countName]],
        );
        return Object.fromEntries(
          rows.map((r) => [r.name, { generic: r.generic_plans, custom: r.custom_plans }]),
        );
      });
      expect(plans).toEqual({
        [pageName]: { generic: 10, custom: 0 },
        [countName]: { generic: 10, custom: 0 },
      });
    } finally {
      await one.close();
    }
  });

  it('with q: the statements stay unnamed, planned for their pattern', async () => {
    const one = createDatabase(t.database.url, { max: 1 });
    try {
      const service = new LocationService(one);
      const page = await service.list(org.id, { q: 'bay 1', limit: 50, offset: 0 });
      // Bay 1, 10-19, 100-120.
      expect(page.total).toBe(1 + 10 + 21);
      const named = await one.withOrg(org.id, async (tx) => {
        const { rows } = await tx.query<{ statement: string }>(
          'SELECT statement FROM pg_prepared_statements',
        );
        return rows.map((r) => r.statement).filter((s) => s.includes('search_text LIKE'));
      });
      expect(named).toEqual([]);
    } finally {
      await one.close();
    }
  });
});
