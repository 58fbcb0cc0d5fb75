import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { preparedQuery } from '../../src/db/prepared.js';
import {
  createTestDatabase,
  describeCounter,
  insertOrganization,
  type TestDatabase,
} from '../helpers/database.js';

/**
 * Named statements through a transaction's `tx.query` (src/db/shaped-query.ts): described
 * where they are parsed, then sent without a Describe and answered from the kept shape.
 */
describe('named statements answered from their kept shape', () => {
  let d: TestDatabase;
  let orgA: number;
  /** One connection, so each call runs on the connection the previous one used. */
  let single: Database;
  /** How many Describe messages the connection has sent. */
  let describes: { count: number };

  beforeAll(async () => {
    d = await createTestDatabase();
    orgA = await insertOrganization(d.db, 'A');
    single = createDatabase(d.url, { max: 1 });
    describes = describeCounter(single.appPool);
  });
  afterAll(async () => {
    await single?.close();
    await d?.drop();
  });

  const read = <R extends pg.QueryResultRow>(config: pg.QueryConfig) =>
    single.readWithOrg(orgA, (tx) => tx.query<R>(config));

  it('describes a named statement once per connection that parses it, and answers alike after', async () => {
    const org = () =>
      preparedQuery('SELECT id, name, created_at FROM organizations WHERE id = $1 AND 1 = 1', [orgA]);
    describes.count = 0;
    const first = await read(org());
    expect(describes.count).toBe(1);
    const again = await read(org());
    const more = await single.readWithOrg(orgA, (tx) => Promise.all([tx.query(org()), tx.query(org())]));
    expect(describes.count).toBe(1);
    for (const r of [again, ...more]) {
      expect(r.rows).toEqual(first.rows);
      expect(r.rows[0].created_at).toBeInstanceOf(Date);
      expect(r.fields.map((f) => f.name)).toEqual(['id', 'name', 'created_at']);
      expect(r.rowCount).toBe(1);
      expect(r.command).toBe('SELECT');
    }
    // Several rows, and none.
    const many = preparedQuery('SELECT g AS n FROM generate_series(1, $1::int) g', [3]);
    await read(many);
    expect((await read({ ...many, values: [3] })).rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect((await read({ ...many, values: [0] })).rows).toEqual([]);
  });

  it("parses rows by the query's own types, described again for other types", async () => {
    const tagged = (tag: string): pg.CustomTypesConfig => ({
      getTypeParser: () => (v: string) => `${tag}:${v}`,
    });
    const statement = preparedQuery('SELECT $1::int AS v', [7]);
    const a = tagged('a');
    await read({ ...statement, types: a });
    describes.count = 0;
    expect((await read({ ...statement, types: a })).rows).toEqual([{ v: 'a:7' }]);
    expect(describes.count).toBe(0);
    expect((await read({ ...statement, types: tagged('b') })).rows).toEqual([{ v: 'b:7' }]);
    expect(describes.count).toBe(1);
    expect((await read(statement)).rows).toEqual([{ v: 7 }]);
  });

  it('rejects a value that cannot be sent and leaves the statement and the connection usable', async () => {
    const statement = () => preparedQuery('SELECT $1::text AS t', ['x']);
    await read(statement());
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(read({ ...statement(), values: [circular] })).rejects.toThrow(/circular/i);
    expect((await read(statement())).rows).toEqual([{ t: 'x' }]);
  });

  it('fails a failing statement whole and answers the next one', async () => {
    const divide = (n: number) => preparedQuery('SELECT 1 / $1::int AS v', [n]);
    await read(divide(1));
    await expect(read(divide(0))).rejects.toMatchObject({ code: '22012' });
    expect((await read(divide(1))).rows).toEqual([{ v: 1 }]);
  });

  it('leaves unnamed statements and writes as they were', async () => {
    expect((await read({ text: 'SELECT $1::int AS v', values: [2] })).rows).toEqual([{ v: 2 }]);
    const rename = () =>
      preparedQuery('UPDATE organizations SET name = name WHERE id = $1 RETURNING id', [orgA]);
    for (let i = 0; i < 2; i++) {
      const r = await single.withOrg(orgA, (tx) => tx.query(rename()));
      expect(r).toMatchObject({ rowCount: 1, rows: [{ id: orgA }], command: 'UPDATE' });
    }
    const touch = () => preparedQuery('UPDATE organizations SET name = name WHERE id = $1', [orgA]);
    for (let i = 0; i < 2; i++) {
      expect(await single.withOrg(orgA, (tx) => tx.query(touch()))).toMatchObject({ rowCount: 1, rows: [] });
    }
  });
});
