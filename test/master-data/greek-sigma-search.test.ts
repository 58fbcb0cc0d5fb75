/**
 * `q` is a case-insensitive substring (API-SPEC, GET /assets `q`), also where lower-casing
 * depends on the place in a word: a capital sigma lower-cases to `ς` at a word's end and
 * to `σ` elsewhere, so `Σ` alone, or a `q` ending in `Σ` inside a longer word, lower-cased
 * on its own, met the stored text in the other form. Lists of assets and locations and
 * the report are checked, and that a sigma matches nothing but a sigma.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { type Fixture, fixture } from '../tracking/fixtures.js';

let t: TestApp;
let f: Fixture;

beforeAll(async () => {
  t = await buildTestApp();
  f = await fixture(t, 'Sigma');
  const road = await f.location('GR-ROAD');
  await t.database.db.pool.query(`UPDATE locations SET name = 'ΟΔΟΣ' WHERE id = $1`, [road]);
  await f.location('GR-OTHER');
  const ends = await f.asset('A-ENDS', { name: 'ΟΔΟΣ' });
  const inside = await f.asset('A-INSIDE', { name: 'ΟΣΑΚ' });
  await f.asset('A-NONE', { name: 'ΟΑΚ ΟΔΟ' });
  await f.scan([ends, road, new Date().toISOString()], [inside, road, new Date().toISOString()]);
});
afterAll(() => t.close());

const keys = async (url: string, q: string, field = 'external_key') => {
  const res = await f.get(`${url}?q=${encodeURIComponent(q)}`);
  expect(res.statusCode).toBe(200);
  return (res.json().data as Record<string, string>[]).map((r) => r[field]).sort();
};

describe.each([
  ['GET /api/v1/assets', '/api/v1/assets', 'external_key'],
  ['the report', '/api/v1/reports/asset-locations', 'asset_external_key'],
])('%s', (_name, url, field) => {
  it('finds a word-final sigma from a capital sigma alone, and from a final one', async () => {
    expect(await keys(url, 'Σ', field)).toEqual(['A-ENDS', 'A-INSIDE']);
    expect(await keys(url, 'ς', field)).toEqual(['A-ENDS', 'A-INSIDE']);
    expect(await keys(url, 'δοσ', field)).toEqual(['A-ENDS']);
  });

  it('finds a sigma inside a word from a q that ends with it', async () => {
    expect(await keys(url, 'ΟΣ', field)).toEqual(['A-ENDS', 'A-INSIDE']);
    expect(await keys(url, 'οςα', field)).toEqual(['A-INSIDE']);
  });

  it('matches a sigma with a sigma only', async () => {
    expect(await keys(url, 'ΟΣΑΚ', field)).toEqual(['A-INSIDE']);
    expect(await keys(url, 'ΑΣ', field)).toEqual([]);
  });
});

it('GET /api/v1/locations', async () => {
  expect(await keys('/api/v1/locations', 'Σ')).toEqual(['GR-ROAD']);
  expect(await keys('/api/v1/locations', 'δοσ')).toEqual(['GR-ROAD']);
  expect(await keys('/api/v1/locations', 'ΔΣ')).toEqual([]);
});
