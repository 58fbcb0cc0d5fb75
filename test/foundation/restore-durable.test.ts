/**
 * A restore is on disk before it says it is done: every file and directory it made is
 * fsynced (files before their directories) while `postgres.restoring` is still there, and
 * the marker is removed only after; a sync that fails fails the restore, which cleans up.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fsyncPath, RESTORE_MARKER, restoreBackup } from '../../src/db/restore.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tagtrail-restore-durable-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function archive(): Promise<Readable> {
  const tar = pack();
  tar.entry({ name: 'postgres', type: 'directory' });
  tar.entry({ name: 'postgres/PG_VERSION' }, '18\n');
  tar.entry({ name: 'postgres/base/1/1259' }, 'pages');
  tar.entry({ name: 'postgres/pg_wal/archive_status', type: 'directory' });
  tar.entry({ name: 'postgres/backup_label' }, 'START WAL LOCATION: 0/2000028\n');
  tar.entry({ name: 'postgres.password' }, 'secret\n');
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
  return Readable.from([Buffer.concat(chunks)]);
}

describe('a restore made durable', () => {
  it('syncs every file and directory it made, then removes the marker, then syncs that', async () => {
    const dataDir = join(root, 'data');
    const marker = join(dataDir, RESTORE_MARKER);
    const synced: { path: string; marker: boolean }[] = [];
    await restoreBackup(await archive(), dataDir, undefined, async (path) => {
      synced.push({ path, marker: existsSync(marker) });
      await fsyncPath(path);
    });
    expect(existsSync(marker)).toBe(false);
    const rel = (path: string) => path.slice(dataDir.length + 1) || '.';
    const paths = synced.map((s) => rel(s.path));
    for (const made of [
      'postgres/PG_VERSION',
      'postgres/base/1/1259',
      'postgres/base/1',
      'postgres/base',
      'postgres/pg_wal/archive_status',
      'postgres/pg_wal',
      'postgres/backup_label',
      'postgres',
      'postgres.password',
      '.',
    ]) {
      expect(paths, made).toContain(made);
    }
    expect(synced.map((s) => s.path)).toContain(root);
    // A file before the directory holding it, so its name is durable with its content.
    expect(paths.indexOf('postgres/base/1/1259')).toBeLessThan(paths.indexOf('postgres/base/1'));
    expect(paths.indexOf('postgres/base')).toBeLessThan(paths.indexOf('postgres'));
    // Everything while the marker was there; the data directory once more after it went.
    expect(synced.slice(0, -1).every((s) => s.marker)).toBe(true);
    expect(synced.at(-1)).toEqual({ path: dataDir, marker: false });
  });

  it('fails, and removes what it unpacked, when a sync fails', async () => {
    const dataDir = join(root, 'failing');
    const failure = await restoreBackup(await archive(), dataDir, undefined, async (path) => {
      if (path.endsWith('1259')) throw Object.assign(new Error(`EIO: i/o error, fsync`), { code: 'EIO' });
    }).catch((err: Error) => err);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain('EIO');
    expect(await readdir(dataDir).catch(() => [])).toEqual([]);
  });
});
