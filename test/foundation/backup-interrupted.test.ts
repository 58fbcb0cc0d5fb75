/**
 * A `tagtrail backup` that cannot finish: its output cannot be opened, its database session
 * lost halfway, or the command stopped by a signal. Either way it fails with a clear
 * message, removes the `.partial` output, and stops the server it started itself (the owner
 * record goes with it), so the data directory is left as it was.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { childEnv, MAIN, postmasterPid, run, start } from '../helpers/compiled.js';
import { exited } from '../helpers/orphan.js';
import { query } from '../helpers/pg-query.js';
import { stoppedDataDirectory } from '../helpers/stopped-data-dir.js';

const dirs = stoppedDataDirectory('tagtrail-backup-interrupted-');

const cliEnv = () => childEnv({ TAGTRAIL_DATA_DIR: dirs.dataDir, LOG_LEVEL: 'silent' });

/**
 * Starts a backup whose output cannot drain: `<out>.partial` is a FIFO that is read only
 * once `release` is called, so the backup stays halfway, its session open, for as long as
 * the test needs. Resolves once the server it started has its backup session.
 */
async function stalledBackup(name: string) {
  const out = join(dirs.root, `${name}.tar.gz`);
  const partial = `${out}.partial`;
  execFileSync('mkfifo', [partial]);
  const backup = start(process.execPath, [MAIN, 'backup', '--out', out], cliEnv());
  const reader = createReadStream(partial);
  reader.pause();
  reader.on('error', () => undefined);
  const password = (await readFile(join(dirs.dataDir, 'postgres.password'), 'utf8')).trim();
  let backend: number | undefined;
  await vi.waitFor(
    async () => {
      const text = await readFile(join(dirs.dataDir, 'postgres', 'postmaster.pid'), 'utf8');
      const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${text.split('\n')[3]}/postgres`;
      const rows = await query<{ pid: number; url: string }>(
        url,
        "SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_backup_start%' AND pid <> pg_backend_pid()",
      );
      expect(rows).toHaveLength(1);
      backend = rows[0]?.pid;
      return url;
    },
    { timeout: 60_000, interval: 100 },
  );
  const postmaster = (await postmasterPid(dirs.dataDir)) as number;
  return {
    out,
    partial,
    backup,
    postmaster,
    backend: backend as number,
    url: async () => {
      const text = await readFile(join(dirs.dataDir, 'postgres', 'postmaster.pid'), 'utf8');
      return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${text.split('\n')[3]}/postgres`;
    },
    /** Reads the output to its end, so a write the backup has in flight completes. */
    release: () => reader.resume(),
  };
}

async function expectLeftAsItWas(stalled: Awaited<ReturnType<typeof stalledBackup>>) {
  expect(existsSync(stalled.partial)).toBe(false);
  expect(existsSync(stalled.out)).toBe(false);
  await exited(stalled.postmaster);
  expect(existsSync(join(dirs.dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  expect(existsSync(join(dirs.dataDir, 'postgres.owner'))).toBe(false);
}

describe('tagtrail backup that cannot finish', () => {
  it('its output cannot be opened: fails naming the file, before any server is started', async () => {
    // A backup disk that is not mounted: the directory is not there (a read-only or full
    // target fails the same open).
    const out = join(dirs.root, 'not-mounted', 'nightly.tar.gz');
    const result = await run(process.execPath, [MAIN, 'backup', '--out', out], cliEnv());
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe(
      `tagtrail: cannot write the backup ${out}.partial: ENOENT: no such file or directory, open '${out}.partial'\n`,
    );
    expect(existsSync(join(dirs.dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    expect(existsSync(join(dirs.dataDir, 'postgres.owner'))).toBe(false);
  }, 60_000);

  it('its database session lost halfway: fails saying so, removes the partial file, stops its server', async () => {
    const stalled = await stalledBackup('lost');
    await query(await stalled.url(), `SELECT pg_terminate_backend(${stalled.backend})`);
    // Still stalled, the session is idle: pg reports its end as an 'error' event, not a failed query.
    await new Promise((resolve) => setTimeout(resolve, 500));
    stalled.release();
    const result = await stalled.backup.result;
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('the database connection was lost during the backup');
    expect(result.stderr).not.toContain('Unhandled');
    await expectLeftAsItWas(stalled);
  }, 120_000);

  it('stopped by SIGTERM halfway: exits 143, removes the partial file, stops its server', async () => {
    const stalled = await stalledBackup('signalled');
    stalled.backup.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    stalled.release();
    const result = await stalled.backup.result;
    expect(result.code, result.stderr).toBe(143);
    expect(result.stderr).toContain('SIGTERM: stopping');
    await expectLeftAsItWas(stalled);
  }, 120_000);
});
