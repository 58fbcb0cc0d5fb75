import { readdir, readFile } from 'node:fs/promises';
import { migrationsDir } from '../../src/db/migrate.js';

/**
 * What a build is, read here from its files, not through src/build-info.ts: the version in
 * package.json and the newest migration, for tests of what the service reports of itself.
 */
export async function buildFacts(): Promise<{ version: string; schema: string }> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const newest = (await readdir(migrationsDir()))
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .at(-1);
  return { version: pkg.version, schema: (newest ?? '').replace(/\.sql$/, '') };
}
