/**
 * `tagtrail serve` stopped while it starts, as a supervisor may: a SIGTERM once the command
 * runs is a clean stop (exit 0), not Node's default death, whether it comes the moment the
 * start-up lines appear or while the embedded PostgreSQL is still starting, which then
 * does not outlive it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, childEnv, MAIN, postmasterPid, ROOT } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
const dirs: string[] = [];

beforeAll(async () => {
  [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
}, 180_000);
afterAll(async () => {
  await database?.drop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Starts `serve` and sends SIGTERM once `ready` resolves. */
async function stopWhileStarting(
  env: NodeJS.ProcessEnv,
  ready: (child: ChildProcess) => Promise<void>,
): Promise<Ended> {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', TAGTRAIL_MQTT_PORT: '0', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const ended = new Promise<Ended>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
  await ready(child);
  child.kill('SIGTERM');
  const result = await ended;
  clearTimeout(guard);
  return result;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('tagtrail serve stopped while it starts', () => {
  it('stops cleanly on a SIGTERM sent the moment it says it listens', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-early-term-'));
    dirs.push(dir);
    let stderr = '';
    const ended = await stopWhileStarting({ DATABASE_URL: database.url, TAGTRAIL_DATA_DIR: dir }, (child) => {
      return new Promise((resolve) => {
        child.stderr?.on('data', (chunk) => {
          stderr += chunk;
          if (stderr.includes('tagtrail listening on')) resolve();
        });
      });
    });
    expect(ended, ended.stderr).toMatchObject({ code: 0, signal: null });
    expect(ended.stderr).toContain('SIGTERM: stopping');
  }, 120_000);

  it('with the embedded PostgreSQL starting, leaves no PostgreSQL behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-early-term-embedded-'));
    dirs.push(dir);
    let postmaster: number | null = null;
    const ended = await stopWhileStarting({ TAGTRAIL_DATA_DIR: dir }, async () => {
      // Until the embedded server has written its pid: it is running, the service not yet.
      for (let i = 0; i < 1200 && postmaster === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        postmaster = await postmasterPid(dir);
      }
    });
    expect(postmaster, ended.stderr).not.toBeNull();
    expect(ended, ended.stderr).toMatchObject({ code: 0, signal: null });
    expect(alive(postmaster as unknown as number)).toBe(false);
  }, 120_000);
});
