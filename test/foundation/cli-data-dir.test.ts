import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, MAIN, run } from '../helpers/compiled.js';

/**
 * The CLI opens the service's database. Run from another directory (or without the
 * service's TAGTRAIL_DATA_DIR) it used to initialise a new, empty one and answer from it.
 */
describe('the CLI without a database in its data directory', () => {
  let work: string;

  const cli = (dataDir: string, ...args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, TAGTRAIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'TAGTRAIL_ENV', 'MQTT_URL']) delete env[name];
    return run(process.execPath, [MAIN, ...args], env);
  };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tagtrail-cli-datadir-'));
    // As root the embedded PostgreSQL runs as `postgres`, which must reach the directory.
    await chmod(work, 0o755);
    await buildIfStale();
  }, 180_000);
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('refuses, naming the directory and how to point at the service, and creates nothing', async () => {
    const dataDir = join(work, 'elsewhere');
    const result = await cli(dataDir, 'org', 'create', '--name', 'Lost', '--json');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`no tagtrail database in ${dataDir}`);
    expect(result.stderr).toContain('TAGTRAIL_DATA_DIR');
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr).toContain('--init');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('creates the database when asked with --init, and then finds it without', async () => {
    const dataDir = join(work, 'new');
    const created = await cli(dataDir, '--init', 'migrate', '--json');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    const again = await cli(dataDir, 'migrate', '--json');
    expect(again.stderr).toBe('');
    expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
  }, 180_000);
});
