import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineParameters } from '../../src/db/opening.js';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { WIRE_INSTANTS } from '../../src/db/wire-instants.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The opening of an organization transaction travels with its first statement, and a read's
 * COMMIT with the connection's next opening (src/db/opening.ts, docs/performance.md step 10).
 */
describe('inlineParameters', () => {
  it('writes each parameter as the quoted text node-postgres would have sent', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(inlineParameters('SELECT $1, $2, $3, $10', [5, 'x', null, 1, 2, 3, 4, 5, 6, 'ten'])).toBe(
      "SELECT '5', 'x', NULL, 'ten'",
    );
    expect(inlineParameters('SELECT $1', ["it's"])).toBe("SELECT 'it''s'");
    expect(inlineParameters('SELECT $1', ['a\\b'])).toBe("SELECT  E'a\\\\b'");
    expect(inlineParameters('SELECT $1::jsonb', [{ a: "'" }])).toBe(`SELECT '{"a":"''"}'::jsonb`);
    expect(inlineParameters('SELECT $1::int[]', [[1, 2]])).toBe('SELECT \'{"1","2"}\'::int[]');
    expect(inlineParameters('SELECT $1', [true])).toBe("SELECT 'true'");
    expect(inlineParameters('SELECT $1::timestamptz', [at])).toMatch(/^SELECT '2026-01-0\d.*'::timestamptz$/);
  });

  it('leaves $n alone inside literals, quoted identifiers and comments', () => {
    expect(inlineParameters(`SELECT '$1', "$1", $1 -- $1\n, /* $1 */ $1`, [7])).toBe(
      `SELECT '$1', "$1", '7' -- $1\n, /* $1 */ '7'`,
    );
    expect(inlineParameters(`SELECT 'a''$1', $1`, [7])).toBe(`SELECT 'a''$1', '7'`);
    expect(inlineParameters('SELECT a$1 FROM t WHERE x = $1', [7])).toBe("SELECT a$1 FROM t WHERE x = '7'");
  });

  it('refuses what it cannot write exactly', () => {
    expect(inlineParameters('SELECT $2', [1])).toBeUndefined();
    expect(inlineParameters('SELECT $1', [Buffer.from('x')])).toBeUndefined();
    expect(inlineParameters('SELECT $$ $1 $$, $1', [1])).toBeUndefined();
    expect(inlineParameters('SELECT $q$ $1 $q$, $1', [1])).toBeUndefined();
    expect(inlineParameters("SELECT E'\\' $1', $1", [1])).toBeUndefined();
    expect(inlineParameters("SELECT 'open", [1])).toBeUndefined();
    expect(inlineParameters('SELECT /* a /* b */ */ $1', [1])).toBeUndefined();
  });

  it('never writes a NUL into the text: the server would take it for the end of the message', () => {
    expect(inlineParameters('SELECT $1', ['x\u0000y'])).toBeUndefined();
    expect(inlineParameters('SELECT $1::text[]', [['a', '\u0000']])).toBeUndefined();
    expect(inlineParameters('SELECT $1, $2', ['a', 'b\u0000'])).toBeUndefined();
  });
});

describe('organization transactions on the wire', () => {
  let d: TestDatabase;
  let orgA: number;
  let orgB: number;
  /** One connection, so every call below runs on the connection the previous one used. */
  let single: Database;
  const sent: unknown[] = [];

  beforeAll(async () => {
    d = await createTestDatabase();
    orgA = await d.db.system(
      async (tx) =>
        (await tx.query<{ id: number }>("INSERT INTO organizations (name) VALUES ('A') RETURNING id"))
          .rows[0]!.id,
    );
    orgB = await d.db.system(
      async (tx) =>
        (await tx.query<{ id: number }>("INSERT INTO organizations (name) VALUES ('B') RETURNING id"))
          .rows[0]!.id,
    );
    single = createDatabase(d.url, { max: 1 });
    single.appPool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        sent.push(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text);
        return query(...args);
      };
    });
  });
  afterAll(async () => {
    await single.close();
    await d.drop();
  });

  const find = (orgId: number, id: number) =>
    single.readWithOrg(orgId, async (tx) => {
      const { rows } = await tx.query<{ id: number; name: string }>(
        'SELECT id, name FROM organizations WHERE id = $1',
        [id],
      );
      return rows;
    });

  it("sends a read's opening and first statement as one message, and its COMMIT with the next opening", async () => {
    sent.length = 0;
    expect(await find(orgA, orgA)).toEqual([{ id: orgA, name: 'A' }]);
    // Row-level security still decides: B's row is not A's to see, with the id inlined.
    expect(await find(orgA, orgB)).toEqual([]);
    expect(await find(orgB, orgB)).toEqual([{ id: orgB, name: 'B' }]);
    expect(sent).toEqual([
      `BEGIN READ ONLY; SET LOCAL tagtrail.org_id = '${orgA}'; SELECT id, name FROM organizations WHERE id = '${orgA}'`,
      `COMMIT; BEGIN READ ONLY; SET LOCAL tagtrail.org_id = '${orgA}'; SELECT id, name FROM organizations WHERE id = '${orgB}'`,
      `COMMIT; BEGIN READ ONLY; SET LOCAL tagtrail.org_id = '${orgB}'; SELECT id, name FROM organizations WHERE id = '${orgB}'`,
    ]);
  });

  it('a statement read with its own types joins the opening too, and is read with them', async () => {
    sent.length = 0;
    const rows = await single.readWithOrg(orgA, async (tx) => {
      const result = await tx.query<{ id: number; created_at: unknown }>({
        text: 'SELECT id, created_at FROM organizations WHERE id = $1',
        values: [orgA],
        types: WIRE_INSTANTS,
      });
      return result.rows;
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain(`SET LOCAL tagtrail.org_id = '${orgA}'; SELECT id, created_at`);
    expect(rows).toHaveLength(1);
    // The id as the pool reads int8 (a number); the timestamp in the wire's form, not a Date.
    expect(rows[0]!.id).toBe(orgA);
    expect(rows[0]!.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('any other user of the connection has the owed COMMIT sent ahead of its statements', async () => {
    await find(orgA, orgA);
    sent.length = 0;
    const { rows } = await single.appPool.query<{ org: string | null; n: number; open: boolean }>(
      "SELECT nullif(current_setting('tagtrail.org_id', true), '') AS org, (SELECT count(*) FROM organizations)::int AS n, now() <> statement_timestamp() AS open",
    );
    expect(sent[0]).toBe('COMMIT');
    expect(rows[0]).toEqual({ org: null, n: 0, open: false });
  });

  it('commits an owed read by itself when nobody takes the connection', async () => {
    const pid = await single.readWithOrg(orgA, async (tx) => {
      const { rows } = await tx.query<{ pid: number }>(
        'SELECT pg_backend_pid() AS pid WHERE $1::int > 0',
        [1],
      );
      return rows[0]!.pid;
    });
    const seen = async () =>
      (
        await d.db.pool.query<{ state: string; query: string }>(
          'SELECT state, query FROM pg_stat_activity WHERE pid = $1',
          [pid],
        )
      ).rows[0];
    // The sweep sends it within a few milliseconds; wait for it rather than for a time.
    let state = await seen();
    for (let i = 0; i < 500 && state?.state !== 'idle'; i++) state = await seen();
    expect(state).toEqual({ state: 'idle', query: 'COMMIT' });
  });

  it("a statement sent with the opening fails as itself: the transaction's work decides what happens", async () => {
    await expect(single.readWithOrg(orgA, (tx) => tx.query('SELECT 1 / $1::int', [0]))).rejects.toMatchObject(
      {
        code: '22012',
      },
    );
    // Caught by the work, the error leaves the result standing, as it did when the opening went alone.
    const caught = await single.withOrg(orgA, async (tx) => {
      await tx.query('SELECT 1 / $1::int', [0]).catch(() => undefined);
      return 'handled';
    });
    expect(caught).toBe('handled');
    expect(await find(orgA, orgA)).toEqual([{ id: orgA, name: 'A' }]);
  });

  it('a NUL parameter fails as the data exception it is, not as a lost connection', async () => {
    const nul = 'x\u0000y';
    for (const attempt of [
      single.readWithOrg(orgA, (tx) => tx.query('SELECT id FROM organizations WHERE name = $1', [nul])),
      single.readOne(orgA, 'SELECT id FROM organizations WHERE name = $1', [nul]),
    ]) {
      const error = await attempt.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toMatchObject({ code: '22021' });
      expect(isDatabaseUnavailable(error)).toBe(false);
    }
    expect(await find(orgA, orgA)).toEqual([{ id: orgA, name: 'A' }]);
  });

  it('readOne sends set_config and its statement as one message, with no transaction left behind', async () => {
    await find(orgA, orgA);
    sent.length = 0;
    const text = 'SELECT id, name FROM organizations WHERE id = $1';
    expect((await single.readOne(orgA, text, [orgA])).rows).toEqual([{ id: orgA, name: 'A' }]);
    // Row-level security decides as in readWithOrg.
    expect((await single.readOne(orgA, text, [orgB])).rows).toEqual([]);
    expect((await single.readOne(orgB, 'SELECT count(*)::int AS n FROM organizations', [])).rows).toEqual([
      { n: 1 },
    ]);
    expect(sent).toEqual([
      `COMMIT; SELECT set_config('tagtrail.org_id', '${orgA}', true); SELECT id, name FROM organizations WHERE id = '${orgA}'`,
      `SELECT set_config('tagtrail.org_id', '${orgA}', true); SELECT id, name FROM organizations WHERE id = '${orgB}'`,
      `SELECT set_config('tagtrail.org_id', '${orgB}', true); SELECT count(*)::int AS n FROM organizations`,
    ]);
    // The setting ended with the message's implicit transaction, as did a failed one's.
    await expect(single.readOne(orgA, 'SELECT 1 / $1::int', [0])).rejects.toMatchObject({ code: '22012' });
    const { rows } = await single.appPool.query<{ org: string | null; open: boolean }>(
      "SELECT nullif(current_setting('tagtrail.org_id', true), '') AS org, now() <> statement_timestamp() AS open",
    );
    expect(rows[0]).toEqual({ org: null, open: false });
  });

  it('means the same with the parameters written as literals', async () => {
    const cases: [string, unknown[]][] = [
      ['SELECT $1::int + 1 AS v', [41]],
      ["SELECT $1 = 'a''b' AS v", ["a'b"]],
      ['SELECT $1::jsonb AS v', [{ a: [1, 'x'], b: null }]],
      ['SELECT 3 = ANY($1::int[]) AS v', [[1, 2, 3]]],
      ['SELECT $1::timestamptz AS v', [new Date('2026-01-02T03:04:05.678Z')]],
      ['SELECT $1 AS v, $2::text IS NULL AS w', ['x\\y', null]],
      ['SELECT length($1) AS v', ['é😀']],
    ];
    for (const [text, values] of cases) {
      const joined = await single.readWithOrg(orgA, (tx) => tx.query(text, values));
      const apart = await d.db.pool.query(text, values);
      expect(joined.rows).toEqual(apart.rows);
    }
  });
});
