import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PENDING_LIST_LIMIT, restrictedConnectionUrl } from '../../src/db/app-connection.js';
import { DatabaseTooNewError, migrate, migrationsDir } from '../../src/db/migrate.js';
import { APP_ROLE, createDatabase, type Database, type Tx } from '../../src/db/pool.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

async function allVersions(): Promise<string[]> {
  return (await readdir(migrationsDir()))
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => f.replace(/\.sql$/, ''));
}

async function recorded(db: Database): Promise<string[]> {
  const { rows } = await db.pool.query<{ version: string }>(
    'SELECT version FROM schema_migrations ORDER BY version',
  );
  return rows.map((r) => r.version);
}

describe('migrations', () => {
  const databases: TestDatabase[] = [];
  const fresh = async () => {
    const d = await createTestDatabase({ migrate: false });
    databases.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of databases) await d.drop();
  });

  it('applies every numbered file once; running again is a no-op', async () => {
    const versions = await allVersions();
    expect(versions[0]).toBe('0001_foundation');
    const { db } = await fresh();

    const first = await migrate(db.pool);
    expect(first.applied).toEqual(versions);
    expect(await recorded(db)).toEqual(versions);

    const second = await migrate(db.pool);
    expect(second.applied).toEqual([]);
    expect(await recorded(db)).toEqual(versions);
  });

  it('two instances migrating one fresh database at once do not race', async () => {
    const versions = await allVersions();
    const { url } = await fresh();
    const a = createDatabase(url, { max: 2 });
    const b = createDatabase(url, { max: 2 });
    try {
      const results = await Promise.all([migrate(a.pool), migrate(b.pool)]);
      // Both succeed; between them every version was applied exactly once.
      const applied = results.flatMap((r) => r.applied).sort();
      expect(applied).toEqual(versions);
      // The lock serialised them: one did all the work, the other found nothing left to do.
      expect(results.map((r) => r.applied.length).sort((x, y) => x - y)).toEqual([0, versions.length]);
      const { rows } = await a.pool.query<{ version: string; n: number }>(
        'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version',
      );
      expect(rows).toEqual(versions.map((version) => ({ version, n: 1 })));
      // The advisory lock was released: a third run gets through and does nothing.
      expect((await migrate(b.pool)).applied).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('runs each file in its own transaction: a failing file leaves nothing behind and is not recorded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-migrations-'));
    try {
      const { db } = await fresh();
      await writeFile(join(dir, '0001_one.sql'), 'CREATE TABLE mig_one (id int);');
      await writeFile(
        join(dir, '0002_two.sql'),
        'CREATE TABLE mig_two (id int);\nINSERT INTO mig_two VALUES (1);\nSELECT no_such_function();',
      );
      await writeFile(join(dir, 'README.md'), 'not a migration');
      await writeFile(join(dir, '3_not_numbered_right.sql'), 'SELECT no_such_function();');

      await expect(migrate(db.pool, dir)).rejects.toThrow(/migration 0002_two\.sql failed/);
      expect(await recorded(db)).toEqual(['0001_one']);
      const exists = async (table: string) =>
        (await db.pool.query('SELECT to_regclass($1) AS t', [table])).rows[0].t !== null;
      expect(await exists('mig_one')).toBe(true);
      expect(await exists('mig_two')).toBe(false);

      // Fixed, the next run applies only the missing file.
      await writeFile(join(dir, '0002_two.sql'), 'CREATE TABLE mig_two (id int);');
      expect((await migrate(db.pool, dir)).applied).toEqual(['0002_two']);
      expect(await recorded(db)).toEqual(['0001_one', '0002_two']);
      expect(await exists('mig_two')).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('refuses a database a newer build migrated, before applying anything, and says what to do', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-migrations-'));
    try {
      const { db } = await fresh();
      await writeFile(join(dir, '0001_one.sql'), 'CREATE TABLE mig_one (id int);');
      await writeFile(join(dir, '0002_two.sql'), 'CREATE TABLE mig_two (id int);');
      await migrate(db.pool, dir);
      // The newer build had a third migration; this build also has one the other never ran.
      await db.pool.query(`INSERT INTO schema_migrations (version) VALUES ('0003_from_a_newer_build')`);
      await writeFile(join(dir, '0004_mine.sql'), 'CREATE TABLE mig_four (id int);');

      const refused = migrate(db.pool, dir);
      await expect(refused).rejects.toThrow(DatabaseTooNewError);
      await expect(refused).rejects.toThrow(
        /migrated by a newer tagtrail \(0003_from_a_newer_build, .*"Upgrading"/,
      );
      expect(await recorded(db)).toEqual(['0001_one', '0002_two', '0003_from_a_newer_build']);
      expect((await db.pool.query(`SELECT to_regclass('mig_four') AS t`)).rows[0].t).toBeNull();
      // The lock was let go: with the newer build's file present, the next run goes on.
      await writeFile(join(dir, '0003_from_a_newer_build.sql'), 'SELECT 1;');
      expect((await migrate(db.pool, dir)).applied).toEqual(['0004_mine']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('row-level security', () => {
  let d: TestDatabase;
  let db: Database;
  let orgA: number;
  let orgB: number;
  const keysOf: Record<number, string[]> = {};

  async function seedOrg(tx: Tx, name: string): Promise<number> {
    const org = await tx.query<{ id: number }>('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [
      name,
    ]);
    const id = org.rows[0]!.id;
    const user = await tx.query<{ id: number }>(
      'INSERT INTO users (org_id, email) VALUES ($1, $2) RETURNING id',
      [id, `${name.toLowerCase()}-${randomUUID()}@example.com`],
    );
    keysOf[id] = [];
    for (let i = 0; i < 2; i++) {
      const keyId = randomUUID();
      keysOf[id].push(keyId);
      await tx.query(
        `INSERT INTO api_keys (id, org_id, name, scopes, environment) VALUES ($1, $2, $3, '{}', 'production')`,
        [keyId, id, `key ${i}`],
      );
    }
    await tx.query(
      `INSERT INTO web_sessions (id, org_id, user_id, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')`,
      [randomUUID(), id, user.rows[0]!.id],
    );
    return id;
  }

  beforeAll(async () => {
    d = await createTestDatabase();
    db = d.db;
    orgA = await db.system((tx) => seedOrg(tx, 'Alpha'));
    orgB = await db.system((tx) => seedOrg(tx, 'Beta'));
  });
  afterAll(() => d.drop());

  it('the system connection sees every organization (the setup is what we think)', async () => {
    const { rows } = await db.system((tx) => tx.query('SELECT org_id FROM api_keys'));
    expect(rows).toHaveLength(4);
  });

  it('inside withOrg(A) a query without WHERE sees only A rows', async () => {
    const seen = await db.withOrg(orgA, async (tx) => ({
      orgs: (await tx.query<{ id: number }>('SELECT id FROM organizations')).rows.map((r) => r.id),
      users: (await tx.query<{ org_id: number }>('SELECT org_id FROM users')).rows.map((r) => r.org_id),
      keys: (await tx.query<{ id: string; org_id: number }>('SELECT id, org_id FROM api_keys ORDER BY id'))
        .rows,
      sessions: (await tx.query<{ org_id: number }>('SELECT org_id FROM web_sessions')).rows.map(
        (r) => r.org_id,
      ),
      counts: (
        await tx.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM api_keys WHERE org_id = ${orgB})::int AS n`,
        )
      ).rows[0]!.n,
    }));
    expect(seen.orgs).toEqual([orgA]);
    expect(seen.users).toEqual([orgA]);
    expect(seen.keys.map((k) => k.id)).toEqual([...keysOf[orgA]!].sort());
    expect(seen.keys.every((k) => k.org_id === orgA)).toBe(true);
    expect(seen.sessions).toEqual([orgA]);
    // Asking for B by name does not help.
    expect(seen.counts).toBe(0);

    const fromB = await db.withOrg(orgB, (tx) => tx.query<{ id: number }>('SELECT id FROM organizations'));
    expect(fromB.rows.map((r) => r.id)).toEqual([orgB]);
  });

  it('runs as the restricted role with the organization set, only for the transaction', async () => {
    // One connection, so the next query reuses the one withOrg used.
    const single = createDatabase(d.url, { max: 1 });
    try {
      const inside = await single.withOrg(orgA, (tx) =>
        tx.query<{ role: string; org: string }>(
          "SELECT current_user AS role, current_setting('tagtrail.org_id', true) AS org",
        ),
      );
      expect(inside.rows[0]).toEqual({ role: APP_ROLE, org: String(orgA) });

      const after = await single.pool.query<{ role: string; org: string | null }>(
        "SELECT current_user AS role, nullif(current_setting('tagtrail.org_id', true), '') AS org",
      );
      expect(after.rows[0]!.role).not.toBe(APP_ROLE);
      expect(after.rows[0]!.org).toBeNull();
      expect((await single.pool.query('SELECT id FROM organizations')).rowCount).toBe(2);

      // The connection withOrg used is the restricted role from its start: once the
      // transaction is over its organization is unset and the policies show nothing.
      const app = await single.appPool.query<{ role: string; org: string | null; n: number }>(
        "SELECT current_user AS role, nullif(current_setting('tagtrail.org_id', true), '') AS org, (SELECT count(*) FROM organizations)::int AS n",
      );
      expect(app.rows[0]).toEqual({ role: APP_ROLE, org: null, n: 0 });
      expect(single.appPool.totalCount).toBe(1);
    } finally {
      await single.close();
    }
  });

  it('readWithOrg reads as the restricted role for the organization, refuses writes, and leaves the connection clean', async () => {
    // One connection: each call below runs behind the previous one's unawaited COMMIT.
    const single = createDatabase(d.url, { max: 1 });
    try {
      const inside = await single.readWithOrg(orgA, async (tx) => ({
        who: (
          await tx.query<{ role: string; org: string; read_only: string }>(
            "SELECT current_user AS role, current_setting('tagtrail.org_id', true) AS org, current_setting('transaction_read_only') AS read_only",
          )
        ).rows[0],
        orgs: (await tx.query<{ id: number }>('SELECT id FROM organizations')).rows.map((r) => r.id),
      }));
      expect(inside).toEqual({ who: { role: APP_ROLE, org: String(orgA), read_only: 'on' }, orgs: [orgA] });

      await expect(
        single.readWithOrg(orgA, (tx) => tx.query('UPDATE organizations SET name = name')),
      ).rejects.toMatchObject({ code: '25006' });

      // The read transaction ended: a write transaction on the same connection commits.
      const name = `Renamed ${randomUUID()}`;
      await single.readWithOrg(orgB, (tx) => tx.query('SELECT 1'));
      await single.withOrg(orgB, (tx) => tx.query('UPDATE organizations SET name = $1', [name]));
      const seen = await db.system((tx) =>
        tx.query<{ name: string }>('SELECT name FROM organizations WHERE id = $1', [orgB]),
      );
      expect(seen.rows[0]!.name).toBe(name);

      const after = await single.pool.query<{ role: string; org: string | null }>(
        "SELECT current_user AS role, nullif(current_setting('tagtrail.org_id', true), '') AS org",
      );
      expect(after.rows[0]!.role).not.toBe(APP_ROLE);
      expect(after.rows[0]!.org).toBeNull();
      // The restricted connection, behind the last unawaited COMMIT: no organization left set.
      const app = await single.appPool.query<{ role: string; org: string | null; n: number }>(
        "SELECT current_user AS role, nullif(current_setting('tagtrail.org_id', true), '') AS org, (SELECT count(*) FROM organizations)::int AS n",
      );
      expect(app.rows[0]).toEqual({ role: APP_ROLE, org: null, n: 0 });
    } finally {
      await single.close();
    }
  });

  it('the restricted connections keep the options a URL already has', () => {
    const ours = `-c role=${APP_ROLE} -c gin_pending_list_limit=${API_PENDING_LIST_LIMIT}`;
    expect(
      new URL(restrictedConnectionUrl('postgres://u:p@h:5432/db', APP_ROLE)).searchParams.get('options'),
    ).toBe(ours);
    const kept = restrictedConnectionUrl(
      'postgres://u:p@h:5432/db?options=-c%20search_path%3Dx&sslmode=disable',
      APP_ROLE,
    );
    expect(new URL(kept).searchParams.get('options')).toBe(`-c search_path=x ${ours}`);
    expect(new URL(kept).searchParams.get('sslmode')).toBe('disable');
  });

  it("the restricted connections keep the trigram indexes' pending lists short; the owner's keep the server's", async () => {
    const limit = (tx: Tx) =>
      tx
        .query<{ v: string }>("SELECT current_setting('gin_pending_list_limit') AS v")
        .then((r) => r.rows[0]!.v);
    expect(await db.withOrg(1, limit)).toBe(API_PENDING_LIST_LIMIT);
    expect(await db.readWithOrg(1, limit)).toBe(API_PENDING_LIST_LIMIT);
    expect(await db.system(limit)).not.toBe(API_PENDING_LIST_LIMIT);
  });

  it('the restricted role without an organization sees nothing', async () => {
    const client = await db.pool.connect();
    try {
      await client.query(`BEGIN; SET LOCAL ROLE ${APP_ROLE}`);
      for (const table of ['organizations', 'users', 'api_keys', 'web_sessions']) {
        const { rowCount } = await client.query(`SELECT * FROM ${table}`);
        expect(rowCount, table).toBe(0);
      }
      // Nor can it write without one.
      await expect(
        client.query(
          `INSERT INTO api_keys (id, org_id, name, scopes, environment) VALUES ($1, $2, 'x', '{}', 'production')`,
          [randomUUID(), orgA],
        ),
      ).rejects.toMatchObject({ code: '42501' });
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('inserting a row for organization B inside withOrg(A) fails', async () => {
    const keyId = randomUUID();
    await expect(
      db.withOrg(orgA, (tx) =>
        tx.query(
          `INSERT INTO api_keys (id, org_id, name, scopes, environment) VALUES ($1, $2, 'smuggled', '{}', 'production')`,
          [keyId, orgB],
        ),
      ),
    ).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/row-level security/) });
    await expect(
      db.withOrg(orgA, (tx) =>
        tx.query('INSERT INTO users (org_id, email) VALUES ($1, $2)', [orgB, 'x@y.z']),
      ),
    ).rejects.toMatchObject({ code: '42501' });
    const { rowCount } = await db.system((tx) => tx.query('SELECT 1 FROM api_keys WHERE id = $1', [keyId]));
    expect(rowCount).toBe(0);
  });

  it('cannot move a row of A to B, nor touch B rows, inside withOrg(A)', async () => {
    const keyOfA = keysOf[orgA]![0]!;
    await expect(
      db.withOrg(orgA, (tx) => tx.query('UPDATE api_keys SET org_id = $1 WHERE id = $2', [orgB, keyOfA])),
    ).rejects.toMatchObject({ code: '42501' });

    const keyOfB = keysOf[orgB]![0]!;
    const touched = await db.withOrg(orgA, async (tx) => ({
      updated: (await tx.query(`UPDATE api_keys SET name = 'hijacked' WHERE id = $1`, [keyOfB])).rowCount,
      deleted: (await tx.query('DELETE FROM web_sessions WHERE org_id = $1', [orgB])).rowCount,
    }));
    expect(touched).toEqual({ updated: 0, deleted: 0 });
    const b = await db.system((tx) => tx.query('SELECT name FROM api_keys WHERE id = $1', [keyOfB]));
    expect(b.rows[0].name).toBe('key 0');
  });

  it('keeps the signing key out of reach of the restricted role', async () => {
    await expect(db.withOrg(orgA, (tx) => tx.query('SELECT * FROM signing_keys'))).rejects.toMatchObject({
      code: '42501',
    });
  });

  it('refuses an organization id that is not a positive integer', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(async () => db.withOrg(bad, async () => undefined)).rejects.toThrow(
        /invalid organization id/,
      );
    }
  });
});
