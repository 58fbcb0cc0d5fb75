import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { preparedQuery } from '../../src/db/prepared.js';
import { withTransactionGuard } from '../../src/db/transaction-guard.js';
import {
  createTestDatabase,
  describeCounter,
  insertOrganization,
  type TestDatabase,
} from '../helpers/database.js';

/**
 * Database.readNamed (src/db/implicit-read.ts): named statements behind the organization's
 * setting as one implicit transaction, on a connection that has them parsed; readWithOrg's
 * way, which parses them, on one that has not.
 */
describe('implicit reads of named statements', () => {
  let d: TestDatabase;
  let orgA: number;
  let orgB: number;
  /** One connection, so each call runs on the connection the previous one used. */
  let single: Database;
  /** What each call sent: the text of a statement, or the name of a query object's class. */
  const sent: string[] = [];
  /** How many Describe messages the connection has sent. */
  let describes: { count: number };

  const org = (id: number) => preparedQuery('SELECT id, name FROM organizations WHERE id = $1', [id]);
  const count = () => preparedQuery('SELECT count(*)::int AS n FROM organizations WHERE id > $1', [0]);
  const state = async () =>
    (
      await single.appPool.query<{ org: string | null; open: boolean }>(
        "SELECT nullif(current_setting('tagtrail.org_id', true), '') AS org, now() <> statement_timestamp() AS open",
      )
    ).rows[0];

  beforeAll(async () => {
    d = await createTestDatabase();
    orgA = await insertOrganization(d.db, 'A');
    orgB = await insertOrganization(d.db, 'B');
    single = createDatabase(d.url, { max: 1 });
    describes = describeCounter(single.appPool);
    single.appPool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const q = args[0] as { text?: string; constructor: { name: string } } | string;
        sent.push(typeof q === 'string' ? q : q.constructor.name === 'Object' ? q.text! : q.constructor.name);
        return query(...args);
      };
    });
  });
  afterAll(async () => {
    await single?.close();
    await d?.drop();
  });

  it('reads the usual way until the connection has the statements, then as one implicit read', async () => {
    const first = await single.readNamed(orgA, [org(orgA), count()]);
    expect(first.map((r) => r.rows)).toEqual([[{ id: orgA, name: 'A' }], [{ n: 1 }]]);
    expect(sent.some((s) => s.startsWith('BEGIN READ ONLY'))).toBe(true);
    sent.length = 0;
    const again = await single.readNamed(orgA, [org(orgA), count()]);
    expect(again.map((r) => r.rows)).toEqual(first.map((r) => r.rows));
    // The first read's COMMIT was owed: it leaves ahead of the implicit read.
    expect(sent).toEqual(['COMMIT', 'ImplicitRead']);
    expect(await state()).toEqual({ org: null, open: false });
  });

  it('applies row-level security for the organization named, and leaves no setting behind', async () => {
    await single.readNamed(orgB, [org(orgA), count()]);
    sent.length = 0;
    const [other, total] = await single.readNamed(orgB, [org(orgA), count()]);
    expect(sent).toEqual(['ImplicitRead']);
    expect(other!.rows).toEqual([]);
    expect(total!.rows).toEqual([{ n: 1 }]);
    const [own] = await single.readNamed(orgB, [org(orgB)]);
    expect(own!.rows).toEqual([{ id: orgB, name: 'B' }]);
    expect(await state()).toEqual({ org: null, open: false });
  });

  it('fails whole on a failing statement and leaves the connection clean', async () => {
    const divide = preparedQuery('SELECT 1 / $1::int AS v', [0]);
    await expect(single.readNamed(orgA, [org(orgA), divide])).rejects.toMatchObject({ code: '22012' });
    sent.length = 0;
    await expect(single.readNamed(orgA, [org(orgA), divide])).rejects.toMatchObject({ code: '22012' });
    expect(sent).toEqual(['ImplicitRead']);
    expect(await state()).toEqual({ org: null, open: false });
    expect((await single.readNamed(orgA, [org(orgA)]))[0]!.rows).toEqual([{ id: orgA, name: 'A' }]);
  });

  it('runs generic plans, both ways, and leaves the setting behind neither', async () => {
    const mode = preparedQuery("SELECT current_setting('plan_cache_mode') AS mode, $1::int AS n", [1]);
    for (let i = 0; i < 2; i++) {
      const [read] = await single.readNamed(orgA, [mode]);
      expect(read!.rows).toEqual([{ mode: 'force_generic_plan', n: 1 }]);
    }
    const after = await single.appPool.query("SELECT current_setting('plan_cache_mode') AS mode");
    expect(after.rows).toEqual([{ mode: 'auto' }]);
    // Under a key confirmation (step 9) the reads ride on a transaction's opening instead.
    const guard = {
      orgId: orgA,
      query: preparedQuery('SELECT $1::int AS ok', [1]),
      verify: () => undefined,
    };
    const guarded = await withTransactionGuard(
      guard,
      async () => undefined,
      () => single.readNamed(orgA, [mode]),
    );
    expect(guarded[0]!.rows).toEqual([{ mode: 'force_generic_plan', n: 1 }]);
  });

  it('a readWithOrg runs generic plans when asked, for its own transaction only', async () => {
    const modeIn = (options?: { genericPlans?: boolean }) =>
      single.readWithOrg(
        orgA,
        async (tx) => (await tx.query("SELECT current_setting('plan_cache_mode') AS mode")).rows[0].mode,
        options,
      );
    expect(await modeIn({ genericPlans: true })).toBe('force_generic_plan');
    expect(await modeIn()).toBe('auto');
    expect(await modeIn({ genericPlans: false })).toBe('auto');
  });

  it('is read only', async () => {
    const write = preparedQuery("UPDATE organizations SET name = 'changed' WHERE id = $1 RETURNING id", [
      orgA,
    ]);
    for (let i = 0; i < 2; i++) {
      await expect(single.readNamed(orgA, [write])).rejects.toMatchObject({ code: '25006' });
    }
    expect(sent.at(-1)).toBe('ImplicitRead');
    const { rows } = await d.db.pool.query('SELECT name FROM organizations WHERE id = $1', [orgA]);
    expect(rows).toEqual([{ name: 'A' }]);
  });

  it('takes numbers, strings and null only', async () => {
    const at = preparedQuery('SELECT $1::timestamptz AS at', [new Date()]);
    await expect(single.readNamed(orgA, [at])).rejects.toThrow(/numbers, strings and null/);
  });

  it("describes a statement once, where it is parsed; implicit reads build its rows from the kept shape, with its types' parsers", async () => {
    const tagged = (tag: string): pg.CustomTypesConfig => ({
      getTypeParser: () => (v: string) => `${tag}:${v}`,
    });
    const typesA = tagged('a');
    // A statement of this test alone: its first read parses (and describes) it the usual way.
    const shaped = () => preparedQuery('SELECT id, name FROM organizations WHERE id = $1 AND true', [orgA]);
    const named = () => ({ ...shaped(), types: typesA });
    describes.count = 0;
    await single.readNamed(orgA, [named()]);
    expect(describes.count).toBe(1);
    describes.count = 0;
    sent.length = 0;
    const [kept] = await single.readNamed(orgA, [named(), named()]);
    expect(sent.at(-1)).toBe('ImplicitRead');
    expect(describes.count).toBe(0);
    expect(kept!.rows).toEqual([{ id: `a:${orgA}`, name: 'a:A' }]);
    expect(kept!.fields.map((f) => f.name)).toEqual(['id', 'name']);
    // Other types for the same statement: described again, parsed by them.
    const [other] = await single.readNamed(orgA, [{ ...shaped(), types: tagged('b') }]);
    expect(describes.count).toBe(1);
    expect(other!.rows).toEqual([{ id: `b:${orgA}`, name: 'b:A' }]);
    // A statement without rows to describe (no RowDescription) still reads whole.
    const none = preparedQuery('SELECT id FROM organizations WHERE id = $1 AND false', [orgA]);
    for (let i = 0; i < 3; i++) expect((await single.readNamed(orgA, [none]))[0]!.rows).toEqual([]);
  });

  it('describes a statement again where a new connection parses it', async () => {
    const pid = preparedQuery('SELECT pg_backend_pid() AS pid, $1::int AS one', [1]);
    await single.readNamed(orgA, [pid]);
    const [before] = await single.readNamed(orgA, [pid]);
    await d.db.pool.query('SELECT pg_terminate_backend($1)', [before!.rows[0].pid]);
    sent.length = 0;
    describes.count = 0;
    await single.readNamed(orgA, [pid]);
    expect(sent.at(-1)).not.toBe('ImplicitRead');
    // The statement and the opening, each parsed there.
    expect(describes.count).toBe(2);
    describes.count = 0;
    const [after] = await single.readNamed(orgA, [pid]);
    expect(sent.at(-1)).toBe('ImplicitRead');
    expect(describes.count).toBe(0);
    expect(after!.rows[0]).toMatchObject({ one: 1 });
  });

  it('reads on a new connection when its connection was closed by the server', async () => {
    const pid = preparedQuery('SELECT pg_backend_pid() AS pid WHERE $1::int > 0', [1]);
    await single.readNamed(orgA, [pid]);
    const [before] = await single.readNamed(orgA, [pid]);
    const killed = before!.rows[0].pid as number;
    await d.db.pool.query('SELECT pg_terminate_backend($1)', [killed]);
    const [after, found] = await single.readNamed(orgA, [pid, org(orgA)]);
    expect(after!.rows[0].pid).not.toBe(killed);
    expect(found!.rows).toEqual([{ id: orgA, name: 'A' }]);
  });
});
