/**
 * The binary array parameters ingest sends (src/db/binary-arrays.ts) read back in
 * PostgreSQL as the values they were written from: any integers with nulls, any text, any
 * instants of years 1-9999; and an element type that does not match the statement's cast
 * fails the statement instead of converting.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { int4Array, int8Array, textArray, timestampArray } from '../../src/db/binary-arrays.js';
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
const noNegativeZero = (v: number) => (Object.is(v, -0) ? 0 : v);

async function readBack(sql: string, param: Buffer): Promise<Array<string | null>> {
  const { rows } = await database.db.pool.query<{ v: Array<string | null> }>(sql, [param]);
  return rows[0]!.v;
}
const asNumbers = (v: Array<string | null>) => v.map((x) => (x === null ? null : Number(x)));

describe('binary array parameters', () => {
  it('bigint[]: any safe integers and nulls read back as written', async () => {
    const value = fc.option(fc.maxSafeInteger().map(noNegativeZero), { nil: null });
    const edges = fc.constantFrom(
      0,
      -1,
      1,
      2 ** 32,
      -(2 ** 32),
      2 ** 32 - 1,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(value, edges), { maxLength: 50 }), async (values) => {
        expect(asNumbers(await readBack('SELECT $1::bigint[]::text[] AS v', int8Array(values)))).toEqual(
          values,
        );
      }),
      { numRuns: 60 },
    );
  });

  it('int[]: any 32-bit integers and nulls read back as written', async () => {
    const value = fc.option(fc.integer().map(noNegativeZero), { nil: null });
    await fc.assert(
      fc.asyncProperty(fc.array(value, { maxLength: 50 }), async (values) => {
        expect(asNumbers(await readBack('SELECT $1::int[]::text[] AS v', int4Array(values)))).toEqual(values);
      }),
      { numRuns: 40 },
    );
  });

  it('text[]: any text and nulls read back as written (quotes, backslashes, braces, NULL, non-ASCII)', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\u0000')),
      fc.constantFrom('NULL', 'null', '', ' ', '"', '\\', '{}', 'a,b', '\\"', 'ÆØÅ', '𝄞'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text, { nil: null }), { maxLength: 20 }), async (values) => {
        expect(await readBack('SELECT $1::text[] AS v', textArray(values))).toEqual(values);
      }),
      { numRuns: 80 },
    );
  });

  it('timestamptz[]: instants read back to the millisecond, whatever the session time zone', async () => {
    const client = await database.db.pool.connect();
    try {
      await client.query("SET TIME ZONE 'America/St_Johns'");
      const instant = fc.oneof(
        fc.integer({ min: MIN_MS, max: MAX_MS }),
        fc.constantFrom(MIN_MS, MAX_MS, 0, -1, Date.UTC(2000, 0, 1)),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(instant, { maxLength: 30 }), async (values) => {
          const { rows } = await client.query<{ v: string[] }>(
            `SELECT ARRAY(SELECT (extract(epoch FROM t) * 1000)::bigint::text FROM unnest($1::timestamptz[]) t) AS v`,
            [timestampArray(values)],
          );
          expect(rows[0]!.v.map(Number)).toEqual(values);
        }),
        { numRuns: 60 },
      );
      // A fraction of a millisecond is cut toward the past, as a Date would.
      const { rows } = await client.query<{ v: string[] }>(
        `SELECT ARRAY(SELECT (extract(epoch FROM t) * 1000)::bigint::text FROM unnest($1::timestamptz[]) t) AS v`,
        [timestampArray([1.9, -1.1])],
      );
      expect(rows[0]!.v).toEqual(['1', '-2']);
    } finally {
      client.release(true);
    }
  });

  it('empty arrays are empty arrays of their type', async () => {
    const { rows } = await database.db.pool.query(
      'SELECT cardinality($1::bigint[]) AS a, cardinality($2::int[]) AS b, cardinality($3::text[]) AS c, cardinality($4::timestamptz[]) AS d',
      [int8Array([]), int4Array([]), textArray([]), timestampArray([])],
    );
    expect(rows[0]).toEqual({ a: 0, b: 0, c: 0, d: 0 });
  });

  it('an element type other than the cast fails the statement', async () => {
    await expect(database.db.pool.query('SELECT $1::int[] AS v', [int8Array([1])])).rejects.toThrow(
      /element type/,
    );
    await expect(
      database.db.pool.query('SELECT $1::timestamptz[] AS v', [textArray(['2026-01-01'])]),
    ).rejects.toThrow(/element type/);
  });

  it('refuses what it cannot write exactly', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => int8Array([bad])).toThrow(TypeError);
    }
    for (const bad of [2 ** 31, -(2 ** 31) - 1, 0.5]) expect(() => int4Array([bad])).toThrow(TypeError);
    for (const bad of [MIN_MS - 1, MAX_MS + 1, Number.NaN])
      expect(() => timestampArray([bad])).toThrow(RangeError);
  });
});
