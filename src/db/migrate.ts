import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { migrationFiles, migrationsDir, versionOf } from './migration-files.js';
import { refuseBesideOlderBuilds } from './older-builds.js';

export { migrationFiles, migrationsDir, versionOf };

/** Arbitrary constant: serialises migrations of instances that start at once. */
const MIGRATION_LOCK = 727_384_001;
/**
 * Migrations (and waiting for another instance's) may take as long as they take: the
 * pool's statement and query timeouts, meant for requests, do not apply. Largest setTimeout.
 */
const UNBOUNDED_MS = 2_147_483_647;
const unbounded = (text: string, values?: unknown[]) => ({ text, values, query_timeout: UNBOUNDED_MS });

export interface MigrationResult {
  applied: string[];
}

/**
 * The database holds migrations this build does not have: a newer tagtrail migrated it.
 * This build does not know what they changed, so it refuses to run on it.
 */
export class DatabaseTooNewError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `the database was migrated by a newer tagtrail (${unknown.join(', ')}, which this build does not have): ` +
        'run that version or a newer one, or restore a backup taken before the upgrade (docs/operations.md, "Upgrading")',
    );
  }
}

export interface MigrationStatus {
  /** Recorded on the database and known to this build. */
  applied: string[];
  /** This build's, not yet recorded: what `migrate` would apply, in order. */
  pending: string[];
  /** Recorded on the database, unknown to this build (a newer build migrated it). */
  unknown: string[];
}

/** What `migrate` would do, without doing it (no lock taken, nothing written). */
export async function migrationStatus(pool: pg.Pool, dir = migrationsDir()): Promise<MigrationStatus> {
  return splitVersions(migrationFiles(dir).map(versionOf), await recordedVersions(pool));
}

async function recordedVersions(client: pg.Pool | pg.ClientBase): Promise<Set<string>> {
  const table = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations') AS t`);
  // A database no build has migrated yet has no record at all.
  const { rows } = table.rows[0]?.t
    ? await client.query<{ version: string }>('SELECT version FROM schema_migrations')
    : { rows: [] };
  return new Set(rows.map((r) => r.version));
}

function splitVersions(versions: string[], done: Set<string>): MigrationStatus {
  const known = new Set(versions);
  return {
    applied: versions.filter((v) => done.has(v)),
    pending: versions.filter((v) => !done.has(v)),
    unknown: [...done].filter((v) => !known.has(v)).sort(),
  };
}

/**
 * Applies every numbered SQL file not yet recorded, each in its own transaction, under an
 * advisory lock. Running it again is a no-op. Refuses, before applying anything, a database
 * on which a version this build does not have was recorded (DatabaseTooNewError), and one
 * with migrations to apply while an older build is connected (OlderBuildsConnectedError).
 */
export async function migrate(pool: pg.Pool, dir = migrationsDir()): Promise<MigrationResult> {
  const files = migrationFiles(dir);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SET statement_timeout = 0');
    await client.query(unbounded('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]));
    const done = await recordedVersions(client);
    const { unknown, pending } = splitVersions(files.map(versionOf), done);
    if (unknown.length > 0) throw new DatabaseTooNewError(unknown);
    // Refused before anything is written, the bookkeeping table included.
    if (pending.length > 0) await refuseBesideOlderBuilds(client);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    for (const file of files) {
      const version = versionOf(file);
      if (done.has(version)) continue;
      const sql = await readFile(join(dir, file), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(unbounded(sql));
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`);
      }
      applied.push(version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.query('RESET statement_timeout').catch(() => undefined);
    client.release();
  }
  return { applied };
}
