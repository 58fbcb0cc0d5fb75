import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { buildIfStale, childEnv, MAIN, start } from '../helpers/compiled.js';

/**
 * The CLI opens the service's database. Run from another directory (or without the
 * service's TAGTRAIL_DATA_DIR) it used to initialise a new, empty one and answer from it.
 */
describe('the CLI without a database in its data directory', () => {
  let work: string;

  const startCli = (dataDir: string, ...args: string[]) => {
    const env = childEnv({ TAGTRAIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    return start(process.execPath, [MAIN, ...args], env);
  };
  const cli = (dataDir: string, ...args: string[]) => startCli(dataDir, ...args).result;

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

  it('waits while another command runs the server it started, and says so', async () => {
    const dataDir = join(work, 'new');
    // This test's process plays a backup of the stopped service: it started the server and
    // stops it when done, so a command joining it would lose its database halfway.
    const backup = await startEmbeddedPostgres(dataDir, { create: false });
    expect(backup.owned).toBe(true);
    let settled = false;
    const command = startCli(dataDir, 'migrate', '--json');
    void command.result.finally(() => {
      settled = true;
    });
    const announced = `the embedded PostgreSQL in ${dataDir} is run by another tagtrail process (pid ${process.pid}, a backup or another command); waiting`;
    // The backup stops only once the command has found it: a fixed two seconds was not
    // always enough for a CLI starting on a loaded machine to get there, and a command that
    // arrives after the backup stopped rightly starts the server itself, saying nothing.
    await vi.waitFor(() => expect(command.stderr()).toContain(announced), { timeout: 60_000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(settled).toBe(false);
    await backup.stop();
    const result = await command.result;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ applied: [] });
  }, 180_000);
});
