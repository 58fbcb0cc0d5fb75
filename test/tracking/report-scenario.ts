/**
 * The asset-location report tests' requests, row shapes and standard scenario. Each test builds
 * its own organization, so every expectation is over the whole report.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { type Fixture, fixture, qs } from './fixtures.js';

export interface Row {
  asset_id: number;
  asset_external_key: string;
  asset_last_seen: string;
  asset_deleted_at: string | null;
  location_id: number | null;
  location_external_key: string | null;
}

export interface ListBody {
  data: Row[];
  limit: number;
  offset: number;
  total_count: number;
}

export const URL = '/api/v1/reports/asset-locations';

export async function report(
  f: Fixture,
  query: [string, string | number | boolean][] = [],
): Promise<ListBody> {
  const res = await f.get(`${URL}${qs(query)}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ListBody;
}

export const keys = (body: ListBody) => body.data.map((r) => r.asset_external_key);

/**
 * Three locations and four scanned assets (plus one never scanned):
 *   A-3 at LOC-B, last seen 09:00      A-1 at LOC-A, last seen 10:00
 *   A-4 at LOC-C, last seen 11:00      A-2 at LOC-A, last seen 12:00
 */
export async function reportScenario(t: TestApp) {
  const f = await fixture(t);
  const L = {
    A: await f.location('LOC-A'),
    B: await f.location('LOC-B'),
    C: await f.location('LOC-C'),
  };
  const a = {
    1: await f.asset('A-1'),
    2: await f.asset('A-2'),
    3: await f.asset('A-3'),
    4: await f.asset('A-4'),
    never: await f.asset('A-NEVER'),
  };
  await f.scan(
    [a[3], L.A, '2025-03-01T08:00:00Z'],
    [a[3], L.B, '2025-03-01T09:00:00Z'],
    [a[1], L.A, '2025-03-01T10:00:00Z'],
    [a[4], L.C, '2025-03-01T11:00:00Z'],
    [a[2], L.A, '2025-03-01T12:00:00Z'],
  );
  return { f, L, a };
}

/**
 * The calling test file's app (vitest hooks registered here: built before its tests, closed
 * after them), as a getter since it exists only once beforeAll has run; `sql` runs a
 * statement on its database as the owner, `scenario` builds a reportScenario on it.
 */
export function reportTestApp() {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  const app = () => t!;
  return {
    app,
    sql: (text: string, values: unknown[] = []) => app().database.db.pool.query(text, values),
    scenario: () => reportScenario(app()),
  };
}
