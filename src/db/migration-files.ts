import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The SQL files live in src/db/migrations; the compiled copy in dist/ looks there. */
export function migrationsDir(): string {
  const here = fileURLToPath(new URL('./migrations', import.meta.url));
  if (existsSync(here)) return here;
  return fileURLToPath(new URL('../../../src/db/migrations', import.meta.url));
}

/** This build's migration files (`NNNN_name.sql`), in the order they apply. */
export function migrationFiles(dir = migrationsDir()): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
}

/** A migration's version: its file name without `.sql`, as schema_migrations records it. */
export const versionOf = (file: string): string => file.replace(/\.sql$/, '');
