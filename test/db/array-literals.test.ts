/**
 * The array literals ingest sends (src/db/array-literals.ts) read back in PostgreSQL as
 * the values they were written from: any integers with nulls, any instants of years 1-9999.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantArray, intArray, textArray } from '../../src/db/array-literals.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await database?.drop();
});

const MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

describe('array literals', () => {
  it('bigint[]: integers and nulls read back as written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.option(
            fc.maxSafeInteger().map((v) => (Object.is(v, -0) ? 0 : v)),
            { nil: null },
          ),
          {
            maxLength: 50,
          },
        ),
        async (values) => {
          const { rows } = await database.db.pool.query<{ v: string[] }>('SELECT $1::bigint[]::text[] AS v', [
            intArray(values),
          ]);
          expect(rows[0]!.v.map((v) => (v === null ? null : Number(v)))).toEqual(values);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('text[]: any text and nulls read back as written (quotes, backslashes, braces, NULL)', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('NULL', 'null', '', ' ', '"', '\\', '{}', 'a,b', '\\"'),
      fc.string({ unit: fc.constantFrom('"', '\\', '{', '}', ',', ' ', 'a', "'") }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text, { nil: null }), { maxLength: 20 }), async (values) => {
        const { rows } = await database.db.pool.query<{ v: Array<string | null> }>('SELECT $1::text[] AS v', [
          textArray(values),
        ]);
        expect(rows[0]!.v).toEqual(values);
      }),
      { numRuns: 80 },
    );
  });

  it('timestamptz[]: instants read back to the millisecond, whatever the session time zone', async () => {
    const client = await database.db.pool.connect();
    await client.query("SET TIME ZONE 'America/St_Johns'");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: MIN_MS, max: MAX_MS }), { maxLength: 30 }),
        async (values) => {
          const { rows } = await client.query<{ v: string[] }>(
            `SELECT ARRAY(SELECT (extract(epoch FROM t) * 1000)::bigint::text FROM unnest($1::timestamptz[]) t) AS v`,
            [instantArray(values)],
          );
          expect(rows[0]!.v.map(Number)).toEqual(values);
        },
      ),
      { numRuns: 60 },
    );
    client.release(true);
  });

  it('refuses what is not an integer or an instant it can write', () => {
    expect(intArray([])).toBe('{}');
    expect(intArray([1, null, -2])).toBe('{1,NULL,-2}');
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => intArray([bad])).toThrow(TypeError);
    }
    expect(instantArray([0])).toBe('{1970-01-01T00:00:00.000Z}');
    // Written as toISOString writes them, on any day and either side of 1970.
    fc.assert(
      fc.property(fc.array(fc.integer({ min: MIN_MS, max: MAX_MS }), { maxLength: 20 }), (values) => {
        expect(instantArray(values)).toBe(`{${values.map((v) => new Date(v).toISOString()).join(',')}}`);
      }),
    );
    for (const bad of [MIN_MS - 1, MAX_MS + 1, Number.NaN]) {
      expect(() => instantArray([bad])).toThrow(RangeError);
    }
  });
});
