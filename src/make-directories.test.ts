import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDirectories } from './make-directories.js';

describe('makeDirectories', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tagtrail-mkdir-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('makes every missing directory of the path and returns the first it made', async () => {
    const path = join(root, 'a', 'b', 'c');
    expect(await makeDirectories(path, 0o700)).toBe(join(root, 'a'));
    expect((await stat(path)).isDirectory()).toBe(true);
    expect((await stat(join(root, 'a'))).mode & 0o777).toBe(0o700);
  });

  it('returns undefined when the whole path is there, and makes only what is missing', async () => {
    expect(await makeDirectories(join(root, 'a', 'b'))).toBeUndefined();
    expect(await makeDirectories(join(root, 'a', 'b', 'd'))).toBe(join(root, 'a', 'b', 'd'));
  });

  it('refuses a path through a file as mkdir does', async () => {
    await writeFile(join(root, 'file'), '');
    await expect(makeDirectories(join(root, 'file'))).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(makeDirectories(join(root, 'file', 'x'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it.runIf(process.platform === 'linux')(
    'fails with ENOENT under /proc, where the recursive mkdir of Node 20 never returns',
    async () => {
      await expect(makeDirectories('/proc/tagtrail-no-such/data')).rejects.toMatchObject({ code: 'ENOENT' });
    },
    5_000,
  );
});
