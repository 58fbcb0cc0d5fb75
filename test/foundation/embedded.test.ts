import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EmbeddedPostgres,
  ensureDatabase,
  type SupervisionEvent,
  startEmbeddedPostgres,
} from '../../src/db/embedded.js';
import { query, reachable } from '../helpers/pg-query.js';

const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.password = password;
  return u.toString();
};

/**
 * The embedded server: initialised once in its data directory with a generated password,
 * reused on the next start, and joined (not owned) by a second process on the same directory.
 */
describe('embedded PostgreSQL', () => {
  let dir: string;
  const started: EmbeddedPostgres[] = [];
  const start = async () => {
    const server = await startEmbeddedPostgres(dir);
    started.push(server);
    return server;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-embedded-test-'));
  });
  afterAll(async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('initialises, is reused after a restart, and is joined while running', {
    timeout: 120_000,
  }, async () => {
    const passwordPath = join(dir, 'postgres.password');

    // First start: initdb with a generated password, then the server.
    const first = await start();
    expect(first.owned).toBe(true);
    expect(existsSync(join(dir, 'postgres', 'PG_VERSION'))).toBe(true);
    const password = await readFile(passwordPath, 'utf8');
    expect(password.trim().length).toBeGreaterThanOrEqual(24);
    expect((await stat(passwordPath)).mode & 0o077).toBe(0); // readable by its owner only
    expect(new URL(first.adminUrl).password).toBe(encodeURIComponent(password.trim()));
    // Loopback only, never the system PostgreSQL's port.
    const { hostname, port } = new URL(first.adminUrl);
    expect(hostname).toBe('127.0.0.1');
    expect(port).not.toBe('5432');
    // The password is required: a wrong one is refused.
    expect(await reachable(withPassword(first.adminUrl, 'wrong-password'))).toBe(false);

    await ensureDatabase(first.adminUrl, 'tagtrail');
    await ensureDatabase(first.adminUrl, 'tagtrail'); // idempotent
    await query(
      first.urlFor('tagtrail'),
      "CREATE TABLE survivor (note text); INSERT INTO survivor VALUES ('kept')",
    );

    // A second start on the same directory while the first runs joins it.
    const joined = await start();
    expect(joined.owned).toBe(false);
    expect(joined.adminUrl).toBe(first.adminUrl);
    expect(await query(joined.urlFor('tagtrail'), 'SELECT note FROM survivor')).toEqual([{ note: 'kept' }]);
    await joined.stop();
    // ...and its stop() leaves the server running.
    expect(await reachable(first.adminUrl)).toBe(true);

    await first.stop();
    await first.stop(); // stopping twice is harmless
    expect(await reachable(first.adminUrl)).toBe(false);
    expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(false);

    // Second start in sequence: the same data, the same password, a server of its own again.
    const second = await start();
    expect(second.owned).toBe(true);
    expect(await readFile(passwordPath, 'utf8')).toBe(password);
    expect(new URL(second.adminUrl).password).toBe(encodeURIComponent(password.trim()));
    expect(await query(second.urlFor('tagtrail'), 'SELECT note FROM survivor')).toEqual([{ note: 'kept' }]);
    await second.stop();
    expect(await reachable(second.adminUrl)).toBe(false);
  });
});

/**
 * Supervision: a postmaster killed outright (kill -9) is started again on the same port,
 * so a pool on the old URL reconnects by itself, and what was committed is still there.
 */
describe('embedded PostgreSQL supervision', () => {
  let dir: string;
  let server: EmbeddedPostgres | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-embedded-supervision-'));
  });
  afterAll(async () => {
    await server?.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  const postmasterPid = async () =>
    Number((await readFile(join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);

  it('restarts a killed postmaster on the same port and keeps the committed data', {
    timeout: 180_000,
  }, async () => {
    server = await startEmbeddedPostgres(dir);
    const events: SupervisionEvent[] = [];
    server.watch((event) => events.push(event));
    await ensureDatabase(server.adminUrl, 'tagtrail');
    const url = server.urlFor('tagtrail');
    await query(url, "CREATE TABLE survivor (note text); INSERT INTO survivor VALUES ('committed')");

    for (let round = 1; round <= 2; round++) {
      const killed = await postmasterPid();
      process.kill(killed, 'SIGKILL');
      await waitUntil(async () => events.filter((e) => e.kind === 'restarted').length === round);
      expect(await postmasterPid()).not.toBe(killed);
      // The same URL (same port, same password) reaches the new server.
      expect(await query(url, 'SELECT note FROM survivor')).toEqual([{ note: 'committed' }]);
    }
    expect(events.filter((e) => e.kind === 'exited')).toEqual([
      { kind: 'exited', code: null, signal: 'SIGKILL', failure: undefined, diskFull: false },
      { kind: 'exited', code: null, signal: 'SIGKILL', failure: undefined, diskFull: false },
    ]);

    // A stop is not a crash: no restart follows it.
    await server.stop();
    expect(await reachable(url)).toBe(false);
    expect(events.filter((e) => e.kind === 'exited')).toHaveLength(2);
    expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(false);
  });
});

/** Polls `check` until it holds; the test's own timeout bounds the wait. */
async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 100));
}
