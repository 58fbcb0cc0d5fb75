/**
 * A second `tagtrail serve` on a data directory whose server a live service runs waits for
 * it (docs/operations.md, "Command line"). While it waits its broker closes every new
 * connection (a reader reconnects later rather than hanging on a CONNECT nobody answers),
 * and a signal ends the wait at once: exit 0, nothing of the other service's touched.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { buildIfStale, childEnv, MAIN, postmasterPid, ROOT } from '../helpers/compiled.js';
import { reachable } from '../helpers/pg-query.js';

let dir: string;
let own: EmbeddedPostgres | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-serve-waiting-'));
  await buildIfStale();
}, 180_000);
afterAll(async () => {
  await own?.stop();
  await rm(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether the broker at `port` closes a new connection within `ms`, before any CONNECT. */
function closesAtOnce(port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, ms);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('a second serve waiting for a live service', () => {
  it('keeps readers out while it waits, and stops at once on SIGTERM', async () => {
    // This test's process plays the live service.
    own = await startEmbeddedPostgres(dir, { role: 'service' });
    const postmaster = await postmasterPid(dir);
    const mqttPort = await freePort();
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      cwd: ROOT,
      env: childEnv({
        TAGTRAIL_DATA_DIR: dir,
        PORT: '0',
        HOST: '127.0.0.1',
        TAGTRAIL_MQTT_PORT: String(mqttPort),
        LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (c) => {
      stderr += c;
    });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
    try {
      await vi.waitFor(() => expect(stderr).toContain('waiting for it to finish before starting'), {
        timeout: 60_000,
        interval: 50,
      });
      expect(await closesAtOnce(mqttPort, 3000)).toBe(true);

      const signalled = Date.now();
      child.kill('SIGTERM');
      expect(await ended, stderr).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalled).toBeLessThan(5000);
      expect(stderr).toContain('SIGTERM: stopping');
      // The live service's server and record are untouched.
      expect(await postmasterPid(dir)).toBe(postmaster);
      expect(await reachable(own.adminUrl)).toBe(true);
      expect(JSON.parse(await readFile(join(dir, 'postgres.owner'), 'utf8'))).toMatchObject({
        pid: process.pid,
      });
    } finally {
      clearTimeout(guard);
      child.kill('SIGKILL');
    }
  }, 120_000);
});
