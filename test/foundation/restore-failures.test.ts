/**
 * `tagtrail restore` failing for reasons outside the archive: an archive that cannot be
 * read fails before anything is made, a file system that fails (a full disk) is reported as
 * what it is, not as a damaged archive, with what was unpacked removed, and a restore killed
 * outright leaves a mark that the next start and the next restore name.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { restoreBackup } from '../../src/db/restore.js';
import { buildIfStale, childEnv, MAIN, ROOT, run } from '../helpers/compiled.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tagtrail-restore-failures-'));
  await buildIfStale();
}, 180_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A small file system to fill, where this process may mount one (root); else null. */
function smallDisk(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('restore failing outside the archive', () => {
  it('an archive that cannot be read: says so, makes nothing', async () => {
    const dataDir = join(root, 'never-made');
    const env = childEnv({ TAGTRAIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const missing = await run(process.execPath, [MAIN, 'restore', join(root, 'nonexistent.tar.gz')], env);
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain(`cannot read the backup ${join(root, 'nonexistent.tar.gz')}: ENOENT`);
    expect(missing.stderr).not.toContain('Unhandled');
    const directory = await run(process.execPath, [MAIN, 'restore', root], env);
    expect(directory.code, directory.stderr).toBe(1);
    expect(directory.stderr).toContain('is a directory, not a backup');
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);

  it('a full disk: reported as such, and what was unpacked is removed', async (context) => {
    const disk = join(root, 'disk');
    await mkdir(disk);
    if (!smallDisk(disk)) context.skip();
    try {
      const tar = pack();
      tar.entry({ name: 'postgres/PG_VERSION' }, '18\n');
      // Random bytes: the archive stays small, the file does not fit.
      tar.entry({ name: 'postgres/base/1/1259' }, randomBytes(2 * 1024 * 1024));
      tar.entry({ name: 'postgres/backup_label' }, 'START WAL LOCATION: 0/2000028\n');
      tar.finalize();
      const chunks: Buffer[] = [];
      for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
      const dataDir = join(disk, 'data');
      const failure = await restoreBackup(Readable.from([Buffer.concat(chunks)]), dataDir).catch((e) => e);
      expect(failure).toBeInstanceOf(Error);
      expect(failure.message).toContain('ENOSPC');
      expect(failure.message).not.toContain('not a readable backup');
      expect(await readdir(disk)).toEqual([]);
    } finally {
      execFileSync('umount', [disk]);
    }
  }, 60_000);

  it('killed outright halfway: the next start and the next restore say the restore did not finish', async () => {
    const tar = pack();
    tar.entry({ name: 'postgres/PG_VERSION' }, '18\n');
    tar.entry({ name: 'postgres/base/1/1259' }, randomBytes(4 * 1024 * 1024));
    tar.entry({ name: 'postgres/backup_label' }, 'START WAL LOCATION: 0/2000028\n');
    tar.entry({ name: 'postgres.password' }, 'pw');
    tar.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
    const archive = Buffer.concat(chunks);
    // Fed through a FIFO: the restore waits, halfway, for the rest that never comes.
    const fifo = join(root, 'halfway.tar.gz');
    execFileSync('mkfifo', [fifo]);
    const dataDir = join(root, 'killed');
    const env = childEnv({ TAGTRAIL_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const restore = spawn(process.execPath, [MAIN, 'restore', fifo], { cwd: ROOT, env, stdio: 'ignore' });
    const exited = new Promise((resolve) => restore.once('exit', resolve));
    const feed = createWriteStream(fifo);
    feed.on('error', () => undefined);
    feed.write(archive.subarray(0, archive.length / 2));
    await vi.waitFor(() => expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true), {
      timeout: 30_000,
      interval: 50,
    });
    restore.kill('SIGKILL');
    await exited;
    feed.destroy();

    const unfinished = `a restore into ${dataDir} has not finished (postgres.restoring is there`;
    const start = await run(process.execPath, [MAIN, 'migrate', '--check'], env);
    expect(start.code, start.stderr).toBe(1);
    expect(start.stderr).toContain(unfinished);
    const whole = join(root, 'whole.tar.gz');
    await writeFile(whole, archive);
    const retried = await run(process.execPath, [MAIN, 'restore', whole], env);
    expect(retried.code, retried.stderr).toBe(1);
    expect(retried.stderr).toContain(unfinished);
  }, 60_000);
});
