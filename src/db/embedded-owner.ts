import { existsSync, readFileSync } from 'node:fs';
import { link, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { DISK_FULL_ADVICE } from './postmaster-log.js';
import { procStatFields } from './proc-stat.js';

/**
 * Who runs the embedded server of a data directory: `serve` (the service) or another
 * command (a backup, `key mint` on a stopped service). The process that starts the server
 * stops it when done, so whoever joins it must know whose it is (startEmbeddedPostgres).
 */
export type EmbeddedRole = 'service' | 'command';

export interface EmbeddedOwner {
  pid: number;
  role: EmbeddedRole;
}

/**
 * The record: with the boot and the process's start time where the system tells them
 * (Linux), so that a record left by a process killed outright or by a machine that went
 * down is not taken for a live owner when its pid is reused, as pids are after a reboot.
 */
interface OwnerRecord extends EmbeddedOwner {
  boot?: string;
  started?: string;
}

const ownerFile = (dataDir: string) => join(dataDir, 'postgres.owner');

/** The data directories whose server this process claimed (its own pid in a record is it). */
const claimedHere = new Set<string>();

/** Claims this process has begun: each writes a draft of its own. */
let drafts = 0;

/**
 * Claims the data directory's server for this process before it starts one: the record is
 * put in place exclusively, so of two processes starting at once one claims and the other
 * sees a live owner. A record whose owner is gone is replaced. False when another live process
 * holds it.
 */
export async function claimOwner(dataDir: string, role: EmbeddedRole): Promise<boolean> {
  const record: OwnerRecord = { pid: process.pid, role, ...identity(process.pid) };
  // Written whole beside it, then linked into place: a hard link fails if the name exists,
  // and nobody can read the record half written (and take it for a dead one's). The draft
  // is this claim's alone: two starts of one process sharing a draft by pid, one removed
  // it before the other linked it (ENOENT instead of a claim or a refusal).
  const draft = `${ownerFile(dataDir)}.${process.pid}.${++drafts}`;
  try {
    // Inside the try: on a full disk the draft is made and its write fails (ENOSPC), and
    // each failed start (a supervisor restarting it every few seconds) left one behind.
    await writeFile(draft, JSON.stringify(record), { mode: 0o600 }).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOSPC'
        ? Object.assign(new Error(`cannot write ${draft}: ${DISK_FULL_ADVICE} (${err.message})`), {
            code: err.code,
            cause: err,
          })
        : err;
    });
    try {
      await link(draft, ownerFile(dataDir));
      claimedHere.add(resolve(dataDir));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (!(await takeOverFromDead(dataDir, draft))) return false;
    claimedHere.add(resolve(dataDir));
    return true;
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * Replaces a dead owner's record with this claim; false when a live process holds the
 * directory or another claim got there first. The check, the removal and the link all happen
 * under the takeover lock: with only the removal locked, a claim that found the record already
 * gone could remove by name the record another had linked since, and both claimed. Every
 * removal takes the lock, so a record found dead here is still the one removed; the only
 * unlocked change is a first link, which succeeds only where no record is, and then this
 * link finds it.
 */
function takeOverFromDead(dataDir: string, draft: string): Promise<boolean> {
  return withTakeoverLock(dataDir, async () => {
    // Looked at once: a record absent here may be linked the next instant, and is not removed.
    if (existsSync(ownerFile(dataDir))) {
      if (await liveOwner(dataDir)) return false;
      await rm(ownerFile(dataDir), { force: true });
    }
    try {
      await link(draft, ownerFile(dataDir));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return false;
    }
  });
}

/** A lock is held for milliseconds; one this old was left by a process killed while holding it. */
const TAKEOVER_LOCK_STALE_MS = 10_000;

async function withTakeoverLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${ownerFile(dataDir)}.takeover`;
  for (;;) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > TAKEOVER_LOCK_STALE_MS) await rm(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}

export async function forgetOwner(dataDir: string): Promise<void> {
  claimedHere.delete(resolve(dataDir));
  await withTakeoverLock(dataDir, () => rm(ownerFile(dataDir), { force: true }));
}

/**
 * The process that claimed the data directory's server, while it lives; null for none or a
 * dead one. A server running without a record is a build's from before the record
 * (unrecordedOwner) while its starter lives.
 */
export async function liveOwner(dataDir: string): Promise<EmbeddedOwner | null> {
  const file = ownerFile(dataDir);
  if (!existsSync(file)) return unrecordedOwner(dataDir);
  let record: OwnerRecord;
  try {
    record = JSON.parse(await readFile(file, 'utf8')) as OwnerRecord;
  } catch {
    return null;
  }
  if (!Number.isInteger(record.pid) || record.pid <= 0) return null;
  // This process's pid in a record it did not write: a predecessor's, as when a container
  // restarts its service as pid 1 again.
  if (record.pid === process.pid && !claimedHere.has(resolve(dataDir))) return null;
  if (!isAlive(record.pid) || !sameProcess(record)) return null;
  return { pid: record.pid, role: record.role };
}

/**
 * Whether a process starting as `role` waits for the server `owner` runs to exit instead
 * of joining it. Only a command joins another live process's server, and only the
 * service's: a command's server is stopped when that command ends (a backup of a stopped
 * service), and a second service on the same directory must not share it. One of this very
 * process is joined. A server whose owner is gone (killed outright, its server left
 * running) is no owner's: it is not joined but taken over (startEmbeddedPostgres).
 */
export function waitsFor(owner: EmbeddedOwner | null, role: EmbeddedRole): boolean {
  return owner !== null && owner.pid !== process.pid && (role === 'service' || owner.role === 'command');
}

/** What a process waiting for `owner`'s server says on its standard error. */
export function waitingLine(dataDir: string, owner: EmbeddedOwner): string {
  const who = owner.role === 'service' ? 'a service' : 'a backup or another command';
  return (
    `the embedded PostgreSQL in ${dataDir} is run by another tagtrail process (pid ${owner.pid}, ${who}); ` +
    'waiting for it to finish before starting'
  );
}

/** The postmaster already running on this data directory (another process of ours). */
export async function runningServer(pgDir: string): Promise<{ pid: number; port: number } | null> {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = (await readFile(pidFile, 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid && port && isAlive(pid) ? { pid, port } : null;
}

/**
 * The live process running the directory's server that wrote no record: a tagtrail build
 * from before postgres.owner (2026-12-01), its postmaster its child. It is the service
 * when started as `serve`. Without this, the new build's `backup` and `migrate --check`,
 * run beside the old service as "Upgrading" says, took its server for an orphan and
 * stopped it. A postmaster whose starter is gone is init's or a subreaper's child: null.
 * Known on Linux only (/proc); null elsewhere.
 */
async function unrecordedOwner(dataDir: string): Promise<EmbeddedOwner | null> {
  const server = await runningServer(join(dataDir, 'postgres'));
  if (!server) return null;
  try {
    const parent = Number(procStatFields(server.pid)?.[1]);
    if (!Number.isInteger(parent) || parent <= 1 || parent === process.pid || !isAlive(parent)) return null;
    const argv = (await readFile(`/proc/${parent}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    if (!/^node/.test(basename(argv[0] ?? ''))) return null;
    return { pid: parent, role: argv.includes('serve') ? 'service' : 'command' };
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether the live `record.pid` is still the process that wrote the record (where that is known). */
function sameProcess(record: OwnerRecord): boolean {
  if (record.boot === undefined || record.started === undefined) return true;
  const now = identity(record.pid);
  if (now.boot === undefined || now.started === undefined) return true;
  return now.boot === record.boot && now.started === record.started;
}

/** The boot's id and the process's start time (clock ticks since boot), on Linux; none elsewhere. */
function identity(pid: number): { boot?: string; started?: string } {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const started = procStatFields(pid)?.[19];
    return started ? { boot, started } : {};
  } catch {
    return {};
  }
}
