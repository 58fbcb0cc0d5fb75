import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrationFiles, versionOf } from './db/migration-files.js';

/** What build this is: the package's version and the newest migration it ships. */
export interface BuildInfo {
  version: string;
  schema: string;
}

let cached: BuildInfo | undefined;

/**
 * Read once from tagtrail's package.json (found above this module, from src/ and from
 * dist/src/ alike) and its migrations directory. During an upgrade the instances of two
 * builds can then be told apart (`tagtrail --version`, `tagtrail_build_info`).
 */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  cached = {
    version: packageVersion(dirname(fileURLToPath(import.meta.url))),
    schema: versionOf(migrationFiles().at(-1) ?? ''),
  };
  return cached;
}

function packageVersion(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'tagtrail' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json of tagtrail above ${from}`);
  }
}
