/**
 * Timestamps as generated, wide: every year 0001-9999, impossible days, hours 24, leap
 * seconds anywhere, 0 to 10 fractional digits, lower-case t and z, every offset RFC 3339
 * can write. PostgreSQL's own parser is the oracle for what a valid instant is: a body's
 * `valid_from` and history's `from` take exactly the instants it takes (digits below the
 * millisecond cut, a :60 only at 23:59:60 UTC on 30 June or 31 December, the API's range
 * and sentinels), answer them in the wire form, and refuse everything else with 400,
 * never a 5xx.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ISO_MS } from '../assets/helpers.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { type Fixture, fixture, qs } from './fixtures.js';

const DAY_MS = 86_400_000;
const MIN_INSTANT = Date.UTC(2000, 0, 1) - 730_119 * DAY_MS; // 0001-01-01T00:00:00Z, refused itself
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** The one stay history is asked about. */
const STAY = '2000-01-01T00:00:00.000Z';

let t: TestApp;
let f: Fixture;
let assetId: number;

beforeAll(async () => {
  t = await buildTestApp();
  f = await fixture(t);
  assetId = await f.asset('ORACLE');
  await f.scan([assetId, await f.location('ORACLE-LOC'), STAY]);
});
afterAll(async () => {
  await t?.close();
});

const pad = (n: number, width: number) => String(n).padStart(width, '0');

const stamp = fc.record({
  year: fc.oneof(fc.integer({ min: 1, max: 9999 }), fc.constantFrom(1, 99, 100, 1969, 1970, 2000, 9999)),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.oneof(fc.integer({ min: 1, max: 28 }), fc.integer({ min: 29, max: 31 })),
  hour: fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 23, 24)),
  minute: fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constant(59)),
  second: fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constantFrom(0, 59, 60)),
  fraction: fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 10 }),
  separator: fc.constantFrom('T', 't'),
  offset: fc.oneof(
    fc.constantFrom('Z', 'z', '+00:00', '-00:00'),
    fc
      .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([sign, h, m]) => `${sign}${pad(h, 2)}:${pad(m, 2)}`),
  ),
});
type Stamp = typeof stamp extends fc.Arbitrary<infer T> ? T : never;

const text = (s: Stamp) =>
  `${pad(s.year, 4)}-${pad(s.month, 2)}-${pad(s.day, 2)}${s.separator}${pad(s.hour, 2)}:${pad(s.minute, 2)}:` +
  `${pad(s.second, 2)}${s.fraction ? `.${s.fraction}` : ''}${s.offset}`;

/**
 * Epoch ms by PostgreSQL, or null where the API must refuse. PostgreSQL takes offsets
 * only up to 15:59 and a leap second without a fraction, so it is given the local time in
 * UTC with second 59 and the offset and the leap second are applied here.
 */
async function oracle(s: Stamp): Promise<number | null> {
  if (s.fraction.length > 9 || s.hour > 23) return null; // not RFC 3339 (PostgreSQL takes both)
  const local =
    `${pad(s.year, 4)}-${pad(s.month, 2)}-${pad(s.day, 2)}T${pad(s.hour, 2)}:${pad(s.minute, 2)}:` +
    `${pad(Math.min(s.second, 59), 2)}${s.fraction ? `.${s.fraction.slice(0, 3)}` : ''}Z`;
  let utc: number;
  try {
    const { rows } = await t.database.db.pool.query<{ ms: number }>(
      'SELECT (extract(epoch FROM $1::timestamptz) * 1000)::float8 AS ms',
      [local],
    );
    utc = rows[0]!.ms;
  } catch {
    return null; // not a date: February 30 and the like
  }
  const offsetMinutes = /^[zZ]$/.test(s.offset)
    ? 0
    : (s.offset[0] === '-' ? -1 : 1) * (Number(s.offset.slice(1, 3)) * 60 + Number(s.offset.slice(4, 6)));
  const instant = utc - offsetMinutes * 60_000 + (s.second === 60 ? 1000 : 0);
  if (instant <= MIN_INSTANT || instant > MAX_INSTANT || instant === 0) return null;
  const wholeSecond = Math.floor(instant / 1000) * 1000;
  if (s.second === 60 && ((wholeSecond % DAY_MS) + DAY_MS) % DAY_MS !== 0) return null;
  // ... and only at the end of June or December, where leap seconds are inserted.
  const next = new Date(wholeSecond);
  if (s.second === 60 && !(next.getUTCDate() === 1 && [0, 6].includes(next.getUTCMonth()))) return null;
  return instant;
}

it('a body and a history query take exactly the instants PostgreSQL does, in the wire form', async () => {
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(stamp, async (s) => {
      const value = text(s);
      const expected = await oracle(s);
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/assets',
        headers: { ...bearer(f.token), 'content-type': 'application/json' },
        payload: { name: 'Oracle', valid_from: value },
      });
      expect(created.statusCode, `${value} ${created.body}`).toBe(expected === null ? 400 : 201);
      const history = await f.get(`/api/v1/assets/${assetId}/history${qs([['from', value]])}`);
      expect(history.statusCode, `${value} ${history.body}`).toBe(expected === null ? 400 : 200);
      if (expected === null) return;
      accepted++;
      const validFrom: string = created.json().data.valid_from;
      expect(validFrom, value).toMatch(ISO_MS);
      expect(Date.parse(validFrom), value).toBe(expected);
      expect(history.json().total_count, value).toBe(Date.parse(STAY) >= expected ? 1 : 0);
    }),
    { numRuns: 500 },
  );
  // The generator must reach valid instants, not only refusals.
  expect(accepted).toBeGreaterThan(100);
}, 120_000);
