/**
 * A build about to migrate refuses while an older build still has connections open on the
 * database: migrations are written for their own build (docs/operations.md, "Upgrading"),
 * and applied under an older instance that still serves they turn its writes into errors.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLICATION_NAME } from '../../src/db/instance-name.js';
import { migrate } from '../../src/db/migrate.js';
import { OlderBuildsConnectedError } from '../../src/db/older-builds.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('migrating beside an older build', () => {
  let database: TestDatabase;
  let dir: string;
  const opened: pg.Client[] = [];
  const connectAs = async (applicationName: string) => {
    const client = new pg.Client({ connectionString: database.url, application_name: applicationName });
    await client.connect();
    opened.push(client);
    return client;
  };
  const recorded = async () =>
    (
      await database.db.pool.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY 1')
    ).rows.map((r) => r.version);

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-migrations-'));
    await writeFile(join(dir, '0001_one.sql'), 'CREATE TABLE mig_one (id int);');
    await migrate(database.db.pool, dir);
  });
  afterAll(async () => {
    for (const c of opened) await c.end().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await database?.drop();
  });

  it("names this build's connections by its newest migration", async () => {
    expect(APPLICATION_NAME).toMatch(/^tagtrail@\d{4}$/);
    // A database of this build's migrations, which make the restricted role of appPool.
    const migrated = await createTestDatabase();
    try {
      for (const pool of [migrated.db.pool, migrated.db.appPool]) {
        const { rows } = await pool.query<{ name: string }>(
          `SELECT current_setting('application_name') AS name`,
        );
        expect(rows[0]?.name).toBe(APPLICATION_NAME);
      }
    } finally {
      await migrated.drop();
    }
  });

  it('does not mind an older build when there is nothing to apply', async () => {
    const older = await connectAs('tagtrail@0001');
    expect((await migrate(database.db.pool, dir)).applied).toEqual([]);
    await older.end();
  });

  it('refuses to apply anything while an older build is connected, naming it, and applies once it is gone', async () => {
    await writeFile(join(dir, '0002_two.sql'), 'CREATE TABLE mig_two (id int);');
    const older = await connectAs('tagtrail@0001');
    const olderPid = (await older.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    // Neither this build's own connections, nor other programs, nor names that only look alike count.
    await connectAs(APPLICATION_NAME);
    await connectAs('psql');
    await connectAs('tagtrail@1');

    const refused = migrate(database.db.pool, dir);
    await expect(refused).rejects.toThrow(OlderBuildsConnectedError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `^1 connection of an older tagtrail \\(tagtrail@0001\\) is open on this database \\(pid ${olderPid}[;)].*"Upgrading"`,
      ),
    );
    expect(await recorded()).toEqual(['0001_one']);
    expect((await database.db.pool.query(`SELECT to_regclass('mig_two') AS t`)).rows[0].t).toBeNull();

    await older.end();
    // pg_stat_activity drops a backend once it has exited, a moment after the client's goodbye.
    for (let i = 0; i < 50; i++) {
      const { rows } = await database.db.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [
        olderPid,
      ]);
      if (rows.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await migrate(database.db.pool, dir)).applied).toEqual(['0002_two']);
  });
});
