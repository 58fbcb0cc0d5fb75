import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EmbeddedPostgres,
  ensureDatabase,
  type SupervisionEvent,
  startEmbeddedPostgres,
} from '../../src/db/embedded.js';
import type { EmbeddedOwner } from '../../src/db/embedded-owner.js';

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function reachable(url: string): Promise<boolean> {
  try {
    await query(url, 'SELECT 1');
    return true;
  } catch {
    return false;
  }
}

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
 * Whose server is joined (src/db/embedded-owner.ts). The process that starts a data
 * directory's server stops it when done, so the service (`role: 'service'`) joins no other
 * live process's server: it waits for it to exit, then starts its own. A command joins
 * whatever runs, and a server whose owner is gone is joined by both. Another process's
 * ownership is played by rewriting postgres.owner with the pid of a live child (`sleep`).
 */
describe('embedded PostgreSQL, whose server is joined', () => {
  let dir: string;
  const started: EmbeddedPostgres[] = [];
  const sleepers: ChildProcess[] = [];
  const ownerFile = () => join(dir, 'postgres.owner');
  /** A live process other than this one, recorded as the server's owner in `role`. */
  const ownedElsewhere = async (role: 'service' | 'command') => {
    const sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    sleepers.push(sleeper);
    await writeFile(ownerFile(), JSON.stringify({ pid: sleeper.pid, role }));
    return sleeper;
  };
  const pending = <T>(promise: Promise<T>) => {
    const state = { settled: false };
    void promise.finally(() => {
      state.settled = true;
    });
    return state;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-embedded-owner-'));
  });
  afterAll(async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    for (const s of sleepers) s.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('records who started it, and forgets it when stopped', { timeout: 120_000 }, async () => {
    const server = await startEmbeddedPostgres(dir, { role: 'service' });
    started.push(server);
    expect(JSON.parse(await readFile(ownerFile(), 'utf8'))).toEqual({ pid: process.pid, role: 'service' });
    // This very process joins its own server.
    const again = await startEmbeddedPostgres(dir, { role: 'service' });
    expect(again.owned).toBe(false);
    await server.stop();
    expect(existsSync(ownerFile())).toBe(false);
  });

  it("the service waits for a command's server to exit, then starts its own on the same data", {
    timeout: 120_000,
  }, async () => {
    const other = await startEmbeddedPostgres(dir);
    started.push(other);
    await ensureDatabase(other.adminUrl, 'tagtrail');
    await query(
      other.urlFor('tagtrail'),
      "CREATE TABLE survivor (note text); INSERT INTO survivor VALUES ('kept')",
    );
    const backup = await ownedElsewhere('command');

    const waits: EmbeddedOwner[] = [];
    const service = startEmbeddedPostgres(dir, { role: 'service', onWait: (o) => waits.push(o) });
    const serviceState = pending(service);
    await pause(1500);
    expect(waits).toEqual([{ pid: backup.pid, role: 'command' }]);
    expect(serviceState.settled).toBe(false);

    await other.stop();
    const own = await service;
    started.push(own);
    expect(own.owned).toBe(true);
    expect(waits).toHaveLength(1);
    expect(await query(own.urlFor('tagtrail'), 'SELECT note FROM survivor')).toEqual([{ note: 'kept' }]);
    // A command started now joins the service's server.
    const joined = await startEmbeddedPostgres(dir);
    expect(joined.owned).toBe(false);
    expect(joined.adminUrl).toBe(own.adminUrl);
    await own.stop();
  });

  it("a command joins the service's server; a server whose owner is gone is joined by both", {
    timeout: 120_000,
  }, async () => {
    const server = await startEmbeddedPostgres(dir);
    started.push(server);
    const owner = await ownedElsewhere('service');
    const command = await startEmbeddedPostgres(dir);
    expect(command.owned).toBe(false);

    const waits: EmbeddedOwner[] = [];
    const service = startEmbeddedPostgres(dir, { role: 'service', onWait: (o) => waits.push(o) });
    const serviceState = pending(service);
    await pause(1500);
    expect(waits).toEqual([{ pid: owner.pid, role: 'service' }]);
    expect(serviceState.settled).toBe(false);
    // Its owner killed outright: nobody will stop that server, so it is joined.
    owner.kill('SIGKILL');
    const joined = await service;
    expect(joined.owned).toBe(false);
    expect(joined.adminUrl).toBe(server.adminUrl);
    await server.stop();
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
      { kind: 'exited', code: null, signal: 'SIGKILL' },
      { kind: 'exited', code: null, signal: 'SIGKILL' },
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
