import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { prepared, preparedQuery } from '../../src/db/prepared.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';

/** Named statements (src/db/prepared.ts): parsed and planned once per connection. */
describe('prepared', () => {
  it('names a text by its content: the same text the same name, another text another', () => {
    const a = prepared('SELECT 1 WHERE $1::int > 0');
    expect(prepared('SELECT 1 WHERE $1::int > 0')).toEqual(a);
    expect(prepared('SELECT 2 WHERE $1::int > 0').name).not.toBe(a.name);
    expect(a.name).toMatch(/^tt_[\w-]{20}$/);
    expect(preparedQuery('SELECT 1 WHERE $1::int > 0', [3])).toEqual({ ...a, values: [3] });
  });
});

describe('named statements on an organization connection', () => {
  let d: TestDatabase;
  let orgA: number;
  let orgB: number;
  /** One connection, so every transaction below runs on the connection the previous one used. */
  let single: Database;
  const NAMES = 'SELECT name FROM organizations WHERE id = $1';

  beforeAll(async () => {
    d = await createTestDatabase();
    orgA = await insertOrganization(d.db, 'A');
    orgB = await insertOrganization(d.db, 'B');
    single = createDatabase(d.url, { max: 1 });
  });
  afterAll(async () => {
    await single.close();
    await d.drop();
  });

  const preparedOnConnection = () =>
    single.readWithOrg(orgA, async (tx) =>
      (await tx.query<{ name: string }>('SELECT name FROM pg_prepared_statements')).rows.map((r) => r.name),
    );

  it('stays prepared on the connection and answers each organization under row-level security', async () => {
    const read = (org: number, id: number) =>
      single.readWithOrg(org, async (tx) => (await tx.query(preparedQuery(NAMES, [id]))).rows);
    expect(await read(orgA, orgA)).toEqual([{ name: 'A' }]);
    // The plan is kept, the policy still decides per transaction: B's row is not A's to see.
    expect(await read(orgA, orgB)).toEqual([]);
    expect(await read(orgB, orgB)).toEqual([{ name: 'B' }]);
    expect(await preparedOnConnection()).toEqual([prepared(NAMES).name]);
  });

  it('sends the same statement twice at once on a connection that has not parsed it', async () => {
    const text = 'SELECT id FROM organizations WHERE id = $1 OR $1 IS NULL';
    const rows = await single.readWithOrg(orgB, (tx) =>
      Promise.all([tx.query(preparedQuery(text, [orgB])), tx.query(preparedQuery(text, [null]))]),
    );
    expect(rows.map((r) => r.rows)).toEqual([[{ id: orgB }], [{ id: orgB }]]);
  });

  it('parses again on the next use when its first Parse met an aborted transaction', async () => {
    const text = 'SELECT $1::int + 1 AS n';
    await expect(
      single.withOrg(orgA, async (tx) => {
        await tx.query('SELECT 1 / 0').catch(() => undefined);
        return tx.query(preparedQuery(text, [1]));
      }),
      // Reported as what aborted the transaction (division by zero), not as the 25P02 the
      // Parse met (src/db/first-failure.ts).
    ).rejects.toMatchObject({ code: '22012' });
    const again = await single.withOrg(orgA, (tx) => tx.query(preparedQuery(text, [41])));
    expect(again.rows).toEqual([{ n: 42 }]);
  });
});
