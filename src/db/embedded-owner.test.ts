import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * Another process's claim landing at the worst instant: right after a takeover looked and
 * found no record. Done from inside the look itself, since no schedule of real processes
 * lands it there on demand (CI once saw two claims of six, in one round of five).
 */
const interleave = vi.hoisted(() => ({ onLook: null as null | ((path: string) => void), diskFull: false }));

vi.mock('node:fs', async (original) => {
  const real = await original<typeof import('node:fs')>();
  return {
    ...real,
    existsSync: (path: fs.PathLike) => {
      const found = real.existsSync(path);
      const hook = interleave.onLook;
      if (hook && String(path).endsWith('postgres.owner')) {
        interleave.onLook = null;
        hook(String(path));
        return false;
      }
      return found;
    },
  };
});

/** A full disk as the kernel makes it: the file is created, its write fails with ENOSPC. */
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>();
  return {
    ...real,
    writeFile: async (...args: Parameters<typeof real.writeFile>) => {
      if (!interleave.diskFull || !String(args[0]).includes('postgres.owner.'))
        return real.writeFile(...args);
      await real.writeFile(args[0], '');
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        syscall: 'write',
      });
    },
  };
});

const { claimOwner, forgetOwner } = await import('./embedded-owner.js');

describe('claimOwner on a full disk', () => {
  it('says the disk is full and leaves no draft behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-owner-full-'));
    interleave.diskFull = true;
    try {
      await expect(claimOwner(dir, 'service')).rejects.toThrow(
        /the disk holding the data directory is full.*ENOSPC/,
      );
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      interleave.diskFull = false;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('claimOwner taking over from a dead owner', () => {
  let dir: string;
  let other: ChildProcess;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-owner-'));
    other = spawn('sleep', ['30']);
  });

  afterEach(async () => {
    interleave.onLook = null;
    other.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('never removes a claim another process linked after the takeover looked, so only that one claims', async () => {
    const file = join(dir, 'postgres.owner');
    const gone = spawn('true');
    await new Promise((resolve) => gone.on('exit', resolve));
    await writeFile(file, JSON.stringify({ pid: gone.pid, role: 'command' }));
    // The dead record was removed by an earlier takeover; the look finds nothing, and the
    // other process's first link lands the next instant.
    interleave.onLook = (path) => {
      fs.rmSync(path);
      fs.writeFileSync(path, JSON.stringify({ pid: other.pid, role: 'command' }));
    };

    expect(await claimOwner(dir, 'command')).toBe(false);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ pid: other.pid, role: 'command' });
  });

  it('takes a dead record over, and a live one is left alone', async () => {
    const file = join(dir, 'postgres.owner');
    const gone = spawn('true');
    await new Promise((resolve) => gone.on('exit', resolve));
    await writeFile(file, JSON.stringify({ pid: gone.pid, role: 'command' }));
    expect(await claimOwner(dir, 'service')).toBe(true);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ pid: process.pid, role: 'service' });
    await forgetOwner(dir);

    await writeFile(file, JSON.stringify({ pid: other.pid, role: 'service' }));
    expect(await claimOwner(dir, 'command')).toBe(false);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ pid: other.pid, role: 'service' });
  });
});
