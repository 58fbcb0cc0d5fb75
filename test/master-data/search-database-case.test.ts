/**
 * `q` is a case-insensitive substring (API-SPEC, GET /assets `q`): any piece of a stored
 * text finds it. The stored search text is lower-cased by PostgreSQL's ICU, which may know
 * an older Unicode than Node's: `Ɤ` (U+A7CB) has a lower case since Unicode 16, so a `q`
 * lower-cased by Node (`ɤ`) missed the `Ɤ` the database kept. Non-ASCII patterns are
 * lower-cased by the database for that reason; this checks the lists and the report, and,
 * as a property, that every substring of a stored name finds it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { type Fixture, fixture } from '../tracking/fixtures.js';

let t: TestApp;
let f: Fixture;

beforeAll(async () => {
  t = await buildTestApp();
  f = await fixture(t, 'NewerUnicode');
  const dock = await f.location('NU-DOCK');
  await t.database.db.pool.query(`UPDATE locations SET name = 'Loc Ɤ' WHERE id = $1`, [dock]);
  const horn = await f.asset('A-HORN', { name: 'Rams Ɤ horn' });
  await f.asset('A-PLAIN', { name: 'Rams horn' });
  await f.scan([horn, dock, new Date().toISOString()]);
});
afterAll(() => t.close());

const keys = async (url: string, q: string, field = 'external_key') => {
  const res = await f.get(`${url}?q=${encodeURIComponent(q)}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as Record<string, string>[]).map((r) => r[field]).sort();
};

describe.each([
  ['GET /api/v1/assets', '/api/v1/assets', 'external_key'],
  ['the report', '/api/v1/reports/asset-locations', 'asset_external_key'],
])('%s', (_name, url, field) => {
  it('finds a letter whose lower case is newer than the database', async () => {
    expect(await keys(url, 'Ɤ', field)).toEqual(['A-HORN']);
    expect(await keys(url, 'RAMS Ɤ', field)).toEqual(['A-HORN']);
    expect(await keys(url, 'rams', field)).toEqual(
      url.includes('reports') ? ['A-HORN'] : ['A-HORN', 'A-PLAIN'],
    );
  });
});

it('GET /api/v1/locations', async () => {
  expect(await keys('/api/v1/locations', 'Ɤ')).toEqual(['NU-DOCK']);
  expect(await keys('/api/v1/locations', 'LOC Ɤ')).toEqual(['NU-DOCK']);
});

it('every substring of a stored name finds it (property)', async () => {
  // Well-formed text without control characters (names refuse them), any script.
  const text = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
    .filter((s) => !/[\p{Cc}\p{Cs}]/u.test(s) && s.trim() === s && s.length > 0);
  let n = 0;
  await fc.assert(
    fc.asyncProperty(text, fc.nat(), fc.nat(), async (name, a, b) => {
      const key = `PROP-${++n}`;
      await f.asset(key, { name });
      const chars = [...name];
      const from = a % chars.length;
      const q = chars.slice(from, from + 1 + (b % (chars.length - from))).join('');
      if (q.trim() === '') return;
      const res = await f.get(`/api/v1/assets?q=${encodeURIComponent(q)}&external_key=${key}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().total_count, `q=${JSON.stringify(q)} in name ${JSON.stringify(name)}`).toBe(1);
    }),
    { numRuns: 60 },
  );
});
