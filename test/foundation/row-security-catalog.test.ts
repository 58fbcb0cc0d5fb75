import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ROLE } from '../../src/db/pool.js';
import { ensureRawPartitions } from '../../src/ingest/retention.js';
import { asOrgRole, createTestDatabase, type TestDatabase } from '../helpers/database.js';

// Row-level security is the second wall between organizations: whatever the request role
// can reach that holds an organization's rows must be filtered by its policy. A partition
// is its own relation, checked against its own row security when a statement names it, so
// partitions are listed here beside their parents.

let database: TestDatabase;
let partition: string;
beforeAll(async () => {
  database = await createTestDatabase();
  const [made] = await ensureRawPartitions(database.db, Date.parse('2031-03-15T10:00:00Z'), 0);
  partition = made!;
  const pool = database.db.pool;
  await pool.query("INSERT INTO organizations (name) VALUES ('first'), ('second')");
  await pool.query(
    `INSERT INTO raw_messages (received_at, org_id, source, payload)
     VALUES ('2031-03-15T11:00:00Z', 1, 'import', 'of the first'), ('2031-03-15T11:00:00Z', 2, 'import', 'of the second'),
            ('2040-01-01T00:00:00Z', 2, 'import', 'in the default partition')`,
  );
});
afterAll(() => database?.drop());

/** Runs `sql` as the request role of organization `org`. */
const asOrg = <T extends object>(org: number, sql: string) => asOrgRole<T>(database, org, sql);

/** The tables and partitions with an org_id on which the request role holds `privileges`. */
async function orgTables(privileges: string) {
  const { rows } = await database.db.pool.query<{ name: string; rls: boolean; policies: number }>(
    `SELECT c.relname AS name, c.relrowsecurity AS rls,
            (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
      WHERE c.relkind IN ('r', 'p')
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
        AND has_table_privilege($1, c.oid, $2)
      ORDER BY 1`,
    [APP_ROLE, privileges],
  );
  return rows;
}

describe('row-level security over the catalog', () => {
  it('every relation with an org_id the request role may touch filters by its policy', async () => {
    const rows = await orgTables('SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER');
    // The check below must see the tables it is about, or it proves nothing.
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['assets', 'raw_messages', 'stays']));
    expect(rows.filter((r) => !r.rls || r.policies === 0).map((r) => r.name)).toEqual([]);
  });

  it('the request role may truncate no relation with an org_id, since TRUNCATE is under no policy', async () => {
    expect((await orgTables('TRUNCATE')).map((r) => r.name)).toEqual([]);
  });

  it('every view the request role may read filters by the organization itself, or runs as its reader', async () => {
    // A view runs with its owner's rights, so the tables' policies do not filter what it
    // reads (unless security_invoker): each one granted to the request role must filter.
    const unfiltered = async () => {
      const { rows } = await database.db.pool.query<{ name: string; invoker: boolean; filters: boolean }>(
        `SELECT c.relname AS name,
                coalesce('security_invoker=true' = ANY (c.reloptions), false) AS invoker,
                pg_get_viewdef(c.oid) LIKE '%current_org_id()%' AS filters
           FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
          WHERE c.relkind IN ('v', 'm') AND has_table_privilege($1, c.oid, 'SELECT')
          ORDER BY 1`,
        [APP_ROLE],
      );
      expect(rows.map((r) => r.name)).toContain('assets_in_org');
      return rows.filter((r) => !r.invoker && !r.filters).map((r) => r.name);
    };
    expect(await unfiltered()).toEqual([]);
    // The check sees a view over every organization's rows.
    await database.db.pool.query('CREATE VIEW every_asset AS SELECT id, org_id FROM assets');
    await database.db.pool.query(`GRANT SELECT ON every_asset TO ${APP_ROLE}`);
    try {
      expect(await unfiltered()).toEqual(['every_asset']);
    } finally {
      await database.db.pool.query('DROP VIEW every_asset');
    }
  });

  it('the raw log is reached through raw_messages only, one organization at a time', async () => {
    const ofFirst = await asOrg<{ payload: string }>(1, 'SELECT payload FROM raw_messages ORDER BY 1');
    expect(ofFirst.map((r) => r.payload)).toEqual(['of the first']);
    for (const name of [partition, 'raw_messages_default']) {
      await expect(asOrg(1, `SELECT payload FROM ${name}`)).rejects.toMatchObject({ code: '42501' });
    }
  });

  it('partitions carry the policy too, should a grant on one come back', async () => {
    await database.db.pool.query(`GRANT SELECT ON ${partition}, raw_messages_default TO ${APP_ROLE}`);
    try {
      const day = await asOrg<{ payload: string }>(2, `SELECT payload FROM ${partition}`);
      expect(day.map((r) => r.payload)).toEqual(['of the second']);
      const rest = await asOrg<{ payload: string }>(1, 'SELECT payload FROM raw_messages_default');
      expect(rest).toEqual([]);
    } finally {
      await database.db.pool.query(`REVOKE SELECT ON ${partition}, raw_messages_default FROM ${APP_ROLE}`);
    }
  });
});
