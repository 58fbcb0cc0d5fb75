import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type EmbeddedPostgres,
  ensureDatabase,
  type SupervisionEvent,
  startEmbeddedPostgres,
} from '../../src/db/embedded.js';
import {
  claimOwner,
  type EmbeddedOwner,
  type EmbeddedRole,
  forgetOwner,
} from '../../src/db/embedded-owner.js';
import { buildIfStale, postmasterPid, ROOT } from '../helpers/compiled.js';
import { alive, leaveOrphanedServer } from '../helpers/orphan.js';
import { query, reachable } from '../helpers/pg-query.js';

/**
 * Whose server is joined (src/db/embedded-owner.ts). The process that starts a data
 * directory's server stops it when done, so the service (`role: 'service'`) joins no other
 * live process's server and a command joins only the service's: each waits for the
 * other's to exit, then starts its own. A server whose owner is gone (killed outright, its
 * postmaster left running) is taken over by whoever claims the directory next: stopped,
 * and started again under that process's supervision.
 * Another process's ownership is played by rewriting postgres.owner with the pid of a
 * live child (`sleep`).
 */
describe('embedded PostgreSQL, whose server is joined', () => {
  let dir: string;
  const started: EmbeddedPostgres[] = [];
  const sleepers: ChildProcess[] = [];
  const ownerFile = () => join(dir, 'postgres.owner');
  /** A live process other than this one, recorded as the server's owner in `role`. */
  const ownedElsewhere = async (role: EmbeddedRole) => {
    const sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    sleepers.push(sleeper);
    await writeFile(ownerFile(), JSON.stringify({ pid: sleeper.pid, role }));
    return sleeper;
  };
  /**
   * A start as `role` that must wait for `owner`'s server: after 1.5 s it has announced
   * exactly that owner and not settled. Returns the start and what it announced.
   */
  const startWaitingFor = async (
    owner: ChildProcess,
    ownerRole: EmbeddedRole,
    role: EmbeddedRole,
    notices: string[] = [],
  ) => {
    const waits: EmbeddedOwner[] = [];
    let settled = false;
    const start = startEmbeddedPostgres(dir, {
      role,
      onWait: (o) => waits.push(o),
      onNotice: (line) => notices.push(line),
    });
    void start.finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(waits).toEqual([{ pid: owner.pid, role: ownerRole }]);
    expect(settled).toBe(false);
    return { start, waits };
  };

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
    expect(JSON.parse(await readFile(ownerFile(), 'utf8'))).toMatchObject({
      pid: process.pid,
      role: 'service',
    });
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
    const { start: service, waits } = await startWaitingFor(backup, 'command', 'service');

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

  it("a command joins the service's server; a service waiting for it takes over once its owner is gone", {
    timeout: 120_000,
  }, async () => {
    const orphan = await leaveOrphanedServer(dir, 'service');
    // Played alive again: a live service's server is joined by a command and waited for by a service.
    const owner = await ownedElsewhere('service');
    const command = await startEmbeddedPostgres(dir);
    expect(command.owned).toBe(false);
    await ensureDatabase(command.adminUrl, 'tagtrail');
    await query(
      command.urlFor('tagtrail'),
      "CREATE TABLE orphaned (note text); INSERT INTO orphaned VALUES ('kept')",
    );

    const notices: string[] = [];
    const { start: service } = await startWaitingFor(owner, 'service', 'service', notices);
    // Its owner killed outright: nobody would stop or restart that server, so it is taken over.
    owner.kill('SIGKILL');
    const own = await service;
    started.push(own);
    expect(own.owned).toBe(true);
    expect(alive(orphan)).toBe(false);
    expect(notices.join('\n')).toContain(
      `(pid ${orphan}) was left running by a tagtrail process that is gone`,
    );
    expect(JSON.parse(await readFile(ownerFile(), 'utf8'))).toMatchObject({
      pid: process.pid,
      role: 'service',
    });
    expect(await query(own.urlFor('tagtrail'), 'SELECT note FROM orphaned')).toEqual([{ note: 'kept' }]);
    await own.stop();
    expect(await postmasterPid(dir)).toBeNull();
  });

  it('a server whose owner is gone is taken over by a command too, which stops it when done', {
    timeout: 120_000,
  }, async () => {
    const orphan = await leaveOrphanedServer(dir, 'service');
    const command = await startEmbeddedPostgres(dir);
    started.push(command);
    expect(command.owned).toBe(true);
    expect(alive(orphan)).toBe(false);
    expect(await reachable(command.adminUrl)).toBe(true);
    // Supervised as any server it starts: killed, it comes back.
    const events: SupervisionEvent[] = [];
    command.watch((e) => events.push(e));
    process.kill((await postmasterPid(dir)) as number, 'SIGKILL');
    await vi.waitFor(() => expect(events.map((e) => e.kind)).toContain('restarted'), { timeout: 60_000 });
    await command.stop();
    expect(await postmasterPid(dir)).toBeNull();
    expect(existsSync(ownerFile())).toBe(false);
  });

  it("a command waits for another command's server to exit, then starts its own", {
    timeout: 120_000,
  }, async () => {
    const other = await startEmbeddedPostgres(dir);
    started.push(other);
    const backup = await ownedElsewhere('command');
    // Joined, it would lose its server when the backup ends and stops it.
    const { start: command } = await startWaitingFor(backup, 'command', 'command');
    await other.stop();
    const own = await command;
    started.push(own);
    expect(own.owned).toBe(true);
    expect(await reachable(own.adminUrl)).toBe(true);
    await own.stop();
  });

  it('two starts at once in a stopped directory: one starts the server, the other joins it', {
    timeout: 120_000,
  }, async () => {
    // The claim is made before the server starts, so the second start cannot take the
    // window between the first one's server being ready and its record being written.
    const [a, b] = await Promise.all([startEmbeddedPostgres(dir), startEmbeddedPostgres(dir)]);
    started.push(a, b);
    expect([a.owned, b.owned].sort()).toEqual([false, true]);
    expect(a.adminUrl).toBe(b.adminUrl);
    const owner = a.owned ? a : b;
    await (a.owned ? b : a).stop();
    expect(await reachable(owner.adminUrl)).toBe(true);
    await owner.stop();
  });

  it("a record whose owner is gone but whose pid lives on is nobody's", { timeout: 120_000 }, async () => {
    // After a reboot (or a container's restart) the recorded pid may be another process's,
    // this one's included: neither is waited for, and the server is taken over.
    const orphan = await leaveOrphanedServer(dir, 'service');
    const reused = await ownedElsewhere('service');
    const record = JSON.parse(await readFile(ownerFile(), 'utf8'));
    await writeFile(ownerFile(), JSON.stringify({ ...record, boot: 'an earlier boot', started: '1' }));
    const service = await startEmbeddedPostgres(dir, { role: 'service' });
    started.push(service);
    expect(service.owned).toBe(true);
    expect(alive(orphan)).toBe(false);
    expect(reused.exitCode).toBeNull();
    await service.stop();

    await writeFile(ownerFile(), JSON.stringify({ pid: process.pid, role: 'service' }));
    const own = await startEmbeddedPostgres(dir, { role: 'service' });
    started.push(own);
    expect(own.owned).toBe(true);
    await own.stop();
  });

  it("of processes finding the same dead owner's record at once, exactly one claims", {
    timeout: 120_000,
  }, async () => {
    await buildIfStale();
    const claimers = 6;
    for (let round = 0; round < 5; round++) {
      const gone = spawn('true');
      await new Promise((resolve) => gone.on('exit', resolve));
      await writeFile(ownerFile(), JSON.stringify({ pid: gone.pid, role: 'command' }));
      // Each claims at the same instant and stays alive until all have answered, so that
      // a claim cannot go stale and be taken again by a later one.
      const at = Date.now() + 1500;
      const children = Array.from({ length: claimers }, () =>
        spawn(process.execPath, ['--input-type=module', '-e', CLAIM_AT, OWNER_MODULE, dir, String(at)], {
          stdio: ['pipe', 'pipe', 'inherit'],
        }),
      );
      const answers = await Promise.all(
        children.map(
          (child) =>
            new Promise<string>((resolve) => {
              let out = '';
              child.stdout?.on('data', (c) => {
                out += c;
                if (out.includes('\n')) resolve(out.trim());
              });
              child.on('exit', () => resolve(out.trim()));
            }),
        ),
      );
      for (const child of children) child.stdin?.end();
      await Promise.all(children.map((child) => new Promise((resolve) => child.on('exit', resolve))));
      expect(
        answers.filter((a) => a === 'claimed'),
        `round ${round}: ${answers.join(', ')}`,
      ).toHaveLength(1);
      expect(answers.filter((a) => a === 'refused')).toHaveLength(claimers - 1);
      await rm(ownerFile(), { force: true });
    }
  });

  it('claims made at once by one process: exactly one claims, the others are refused, none fails', async () => {
    // Each claim writes a draft of its own: sharing one by pid, a claim could remove it
    // before another linked it, which failed that start with ENOENT.
    const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (let round = 0; round < 50; round++) {
      // Staggered by a millisecond or two, as two starts reach their claims.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => after(i % 3).then(() => claimOwner(dir, 'command'))),
      );
      expect(answers.filter(Boolean), `round ${round}`).toHaveLength(1);
      await forgetOwner(dir);
    }
  });

  it('a takeover lock left by a process killed while holding it is broken once it is old', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.on('exit', resolve));
    await writeFile(ownerFile(), JSON.stringify({ pid: gone.pid, role: 'command' }));
    const lock = `${ownerFile()}.takeover`;
    await writeFile(lock, String(gone.pid));
    const past = new Date(Date.now() - 20_000);
    await utimes(lock, past, past);
    expect(await claimOwner(dir, 'command')).toBe(true);
    expect(JSON.parse(await readFile(ownerFile(), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(existsSync(lock)).toBe(false);
    await forgetOwner(dir);
  });
});

const OWNER_MODULE = join(ROOT, 'dist/src/db/embedded-owner.js');
/** A process that claims the data directory argv[2] at the instant argv[3], says so, and lives until its stdin ends. */
const CLAIM_AT = `
const { claimOwner } = await import(process.argv[1]);
const at = Number(process.argv[3]);
while (Date.now() < at);
const claimed = await claimOwner(process.argv[2], 'command');
process.stdout.write(claimed ? 'claimed\\n' : 'refused\\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;
