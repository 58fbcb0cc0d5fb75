import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type SupervisionEvent, supervise, waitUntilReady } from './embedded-supervisor.js';
import { crashCause, DISK_FULL_ADVICE, failureOf, withoutRefusals } from './postmaster-log.js';

const at = (pid: number, text: string) => `2026-12-04 05:54:03.235 UTC [${pid}] ${text}`;
const refusals = (n: number) =>
  Array.from({ length: n }, (_, i) => [
    at(7000 + i, 'FATAL:  the database system is not yet accepting connections'),
    at(7000 + i, 'DETAIL:  Consistent recovery state has not been yet reached.'),
  ]).flat();

/** A recovery on a full disk as the embedded PostgreSQL 18 logged it in the disk-full drill (2026-12-04). */
const fullDiskRecovery = [
  at(6400, 'LOG:  starting PostgreSQL 18.4 on x86_64-pc-linux-gnu'),
  at(6400, 'LOG:  listening on IPv4 address "127.0.0.1", port 33793'),
  at(6406, 'LOG:  database system was interrupted while in recovery at 2026-12-04 05:53:55 UTC'),
  at(
    6406,
    'HINT:  This probably means that some data is corrupted and you will have to use the last backup for recovery.',
  ),
  at(6406, 'LOG:  redo starts at 0/174B5E8'),
  ...refusals(300),
  at(6406, 'LOG:  redo done at 0/10FFFC90 system usage: CPU: user: 0.93 s, system: 0.10 s, elapsed: 2.27 s'),
  at(6406, 'FATAL:  could not write to file "pg_wal/xlogtemp.6406": No space left on device'),
  at(6400, 'LOG:  startup process (PID 6406) exited with exit code 1'),
  at(6400, 'LOG:  shutting down due to startup process failure'),
  at(6400, 'LOG:  database system is shut down'),
  '',
].join('\n');

/** A server that served, then could not write its WAL: its PANIC, and the recovery after it failing too. */
const crashOnFullDisk = [
  at(1, 'LOG:  database system is ready to accept connections'),
  at(2, 'FATAL:  password authentication failed for user "postgres"'),
  at(3, 'PANIC:  could not write to file "pg_wal/xlogtemp.3": No space left on device'),
  at(1, 'LOG:  WAL writer process (PID 3) was terminated by signal 6: Aborted'),
  at(1, 'LOG:  terminating any other active server processes'),
  ...refusals(5),
  at(4, 'FATAL:  could not write to file "pg_wal/xlogtemp.4": No space left on device'),
  at(1, 'LOG:  shutting down due to startup process failure'),
  '',
].join('\n');

/** A child process that writes `log` on standard error and exits with `code`. */
const postmasterWriting = (log: string, code: number): ChildProcess =>
  spawn(
    process.execPath,
    ['-e', `process.stderr.write(${JSON.stringify(log)}, () => process.exit(${code}))`],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );

describe('the postmaster log', () => {
  it('leaves out the connections it refused while recovering, and names the failure', () => {
    const kept = withoutRefusals(fullDiskRecovery);
    expect(kept).not.toContain('not yet accepting connections');
    expect(kept).not.toContain('Consistent recovery state');
    expect(kept.split('\n')).toHaveLength(10);
    expect(failureOf(fullDiskRecovery)).toBe(
      'could not write to file "pg_wal/xlogtemp.6406": No space left on device',
    );
  });

  it('keeps at most its last 30 lines', () => {
    const long = Array.from({ length: 100 }, (_, i) => at(1, `LOG:  line ${i}`)).join('\n');
    const kept = withoutRefusals(long).split('\n');
    expect(kept).toHaveLength(31);
    expect(kept[0]).toBe('(70 earlier lines not shown)');
    expect(kept[30]).toContain('line 99');
  });

  it("a crash's cause is its failed recovery, else its PANIC; never a client's FATAL before it", () => {
    const lines = crashOnFullDisk.split('\n');
    expect(crashCause(lines.slice(0, 2).join('\n'))).toBeUndefined();
    expect(crashCause(lines.slice(0, 4).join('\n'))).toBe(
      'could not write to file "pg_wal/xlogtemp.3": No space left on device',
    );
    expect(crashCause(crashOnFullDisk)).toBe(
      'could not write to file "pg_wal/xlogtemp.4": No space left on device',
    );
  });
});

describe('the supervisor on a full disk', () => {
  it('a start that fails says the disk is full, in a few lines rather than every refused connection', async () => {
    const error = await waitUntilReady(postmasterWriting(fullDiskRecovery, 1), 20_000).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toContain(`exited (1) while starting: ${DISK_FULL_ADVICE}`);
    expect(error?.message).toContain('No space left on device');
    expect(error?.message).not.toContain('not yet accepting connections');
    expect(error?.message.length).toBeLessThan(3000);
  });

  it('a start that times out shows its log without the refused connections', async () => {
    const stuck = spawn(
      process.execPath,
      [
        '-e',
        `process.stderr.write(${JSON.stringify(refusals(200).join('\n'))}); setInterval(() => {}, 1000)`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    try {
      const error = await waitUntilReady(stuck, 1000).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(error?.message).toMatch(/^embedded PostgreSQL did not start:/);
      expect(error?.message).not.toContain('not yet accepting connections');
    } finally {
      stuck.kill('SIGKILL');
    }
  });

  it('a server that dies names why: the watcher hears the disk is full', async () => {
    const [ready, ...crash] = crashOnFullDisk.split('\n');
    const first = spawn(
      process.execPath,
      [
        '-e',
        `process.stderr.write(${JSON.stringify(`${ready}\n`)});
         setTimeout(() => process.stderr.write(${JSON.stringify(crash.join('\n'))}, () => process.exit(1)), 300);`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    await waitUntilReady(first, 20_000);
    const events: SupervisionEvent[] = [];
    const supervised = supervise(first, () => postmasterWriting(fullDiskRecovery, 1));
    supervised.watch((event) => events.push(event));
    await expect.poll(() => events.filter((e) => e.kind === 'restart-failed').length).toBeGreaterThan(0);
    await supervised.stop();
    expect(events[0]).toMatchObject({
      kind: 'exited',
      code: 1,
      failure: 'could not write to file "pg_wal/xlogtemp.4": No space left on device',
      diskFull: true,
    });
    expect(events[1]).toMatchObject({ kind: 'restart-failed', attempt: 1, diskFull: true });
  });

  it('waits for the disk to gain room before the next attempt, and starts at once when it has', async () => {
    const [ready] = crashOnFullDisk.split('\n');
    const serving = () =>
      spawn(
        process.execPath,
        ['-e', `process.stderr.write(${JSON.stringify(`${ready}\n`)}); setInterval(() => {}, 1000)`],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
    const first = serving();
    await waitUntilReady(first, 20_000);
    let free = 5 * 1024 * 1024;
    const spawned: string[] = [];
    const supervised = supervise(
      first,
      () => {
        spawned.push(free > 5 * 1024 * 1024 ? 'serving' : 'full');
        return free > 5 * 1024 * 1024 ? serving() : postmasterWriting(fullDiskRecovery, 1);
      },
      { freeBytes: async () => free },
    );
    const events: SupervisionEvent[] = [];
    supervised.watch((event) => events.push(event));
    try {
      first.kill('SIGKILL');
      await expect.poll(() => events.some((e) => e.kind === 'restart-failed')).toBe(true);
      // Without the wait: attempts at 0.25, 0.5, 1 and 2 s, each replaying the whole log.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(spawned).toEqual(['full']);
      const freedAt = Date.now();
      free += 200 * 1024 * 1024;
      await expect.poll(() => events.some((e) => e.kind === 'restarted')).toBe(true);
      expect(Date.now() - freedAt).toBeLessThan(3000);
      expect(spawned).toEqual(['full', 'serving']);
    } finally {
      await supervised.stop();
    }
  });

  it('takes a disk with room by the time it is read for one that is not full, and tries again within seconds', async () => {
    const [ready] = crashOnFullDisk.split('\n');
    const first = spawn(
      process.execPath,
      ['-e', `process.stderr.write(${JSON.stringify(`${ready}\n`)}); setInterval(() => {}, 1000)`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    await waitUntilReady(first, 20_000);
    // The attempt failed on a full disk, and room was made before the supervisor looked.
    const supervised = supervise(first, () => postmasterWriting(fullDiskRecovery, 1), {
      freeBytes: async () => 200 * 1024 * 1024,
    });
    const events: SupervisionEvent[] = [];
    supervised.watch((event) => events.push(event));
    try {
      first.kill('SIGKILL');
      // Without the room taken into account: the second attempt only after a minute.
      await expect
        .poll(() => events.filter((e) => e.kind === 'restart-failed').length, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(2);
    } finally {
      await supervised.stop();
    }
  }, 20_000);
});
