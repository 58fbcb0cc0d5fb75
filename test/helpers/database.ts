import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { migrate, migrationFiles, migrationsDir } from '../../src/db/migrate.js';
import { APP_ROLE, createDatabase, type Database } from '../../src/db/pool.js';

export interface TestDatabase {
  url: string;
  name: string;
  db: Database;
  drop(): Promise<void>;
}

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new, empty, migrated database on the run's server; `drop` removes it. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `tagtrail_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = databaseUrl(inject('adminDatabaseUrl'), name);
  const db = createDatabase(url, { max: 10 });
  if (options.migrate !== false) await migrate(db.pool);
  let dropped = false;
  return {
    url,
    name,
    db,
    async drop() {
      if (dropped) return;
      dropped = true;
      await db.close().catch(() => undefined);
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * Runs `sql` as the request role of organization `org`, as the service's requests do, in a
 * transaction that is rolled back: what the role may see, and what it is refused.
 */
export async function asOrgRole<T extends object>(
  database: TestDatabase,
  org: number,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = await database.db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL ROLE ${APP_ROLE}`);
    await client.query("SELECT set_config('tagtrail.org_id', $1, true)", [String(org)]);
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

/**
 * A connection for bulk fixtures, without the service's statement and query timeouts:
 * seeding tens of thousands of rows on a loaded machine can take longer than the bound
 * the service keeps for its own requests, and a fixture is not what is under test.
 */
export async function withSeedClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET statement_timeout = 0');
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Resolves once at least `count` sessions of `db`'s database match `where`, a condition on
 * pg_stat_activity (`wait_event_type = 'Lock'`: waiting for a row, table or advisory
 * lock). Tests order concurrent transactions by what the server reports rather than by a
 * pause, which a loaded machine may outlast; fails with `what` after `timeoutMs`.
 */
export async function untilSessions(
  db: Database,
  where: string,
  what: string,
  { count = 1, timeoutMs = 30_000 }: { count?: number; timeoutMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND (${where})`,
    );
    if (rows[0]!.n >= count) return;
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * VACUUM ANALYZE each of `tables` until its visibility map covers every page, as a settled
 * database has it. Plan tests that expect index-only scans depend on that map: the location
 * list's count is a near tie (index-only 1,408 against about 1,425 for a Seq Scan at 20,000
 * locations), so a few pages left not all-visible, which a transaction open elsewhere in the
 * database during the VACUUM can cause, turn it into a Seq Scan (a CI run of 2026-11-28).
 */
export async function settleTables(
  client: pg.Client | pg.Pool,
  tables: string[],
  { attempts = 50, pauseMs = 100 } = {},
): Promise<void> {
  for (const table of tables) {
    for (let attempt = 1; ; attempt++) {
      await client.query(`VACUUM ANALYZE ${table}`);
      const { rows } = await client.query<{ relpages: number; relallvisible: number }>(
        'SELECT relpages, relallvisible FROM pg_class WHERE oid = $1::regclass',
        [table],
      );
      const { relpages, relallvisible } = rows[0]!;
      if (relallvisible >= relpages) break;
      if (attempt === attempts) {
        throw new Error(
          `${table}: ${relallvisible} of ${relpages} pages all-visible after ${attempts} VACUUMs`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

/** A bare organization row (no owner, no key): for tests of the database layer. */
export async function insertOrganization(db: Database, name: string): Promise<number> {
  return db.system(
    async (tx) =>
      (await tx.query<{ id: number }>('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [name]))
        .rows[0]!.id,
  );
}

/** Counts the Describe messages sent by the connections `pool` opens from now on. */
export function describeCounter(pool: pg.Pool): { count: number } {
  const counter = { count: 0 };
  pool.on('connect', (client: pg.PoolClient) => {
    const connection = (client as unknown as { connection: { describe(...a: unknown[]): void } }).connection;
    const describe = connection.describe.bind(connection);
    connection.describe = (...a: unknown[]) => {
      counter.count++;
      describe(...a);
    };
  });
  return counter;
}

/**
 * The migrations in two steps, for a test of one migration on data written before it: those
 * numbered below `version`, then `between` (writing that data), then the rest.
 */
export async function migrateAround(
  pool: pg.Pool,
  version: string,
  between: () => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `tagtrail-${version}-`));
  try {
    const files = migrationFiles();
    const copy = (names: string[]) =>
      Promise.all(names.map((f) => copyFile(join(migrationsDir(), f), join(dir, f))));
    await copy(files.filter((f) => f < version));
    await migrate(pool, dir);
    await between();
    await copy(files.filter((f) => f >= version));
    await migrate(pool, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
