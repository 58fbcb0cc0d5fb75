/**
 * A server left running on a data directory by a tagtrail process that is gone (killed
 * outright: its postmaster outlives it, parented to init). Nobody supervises it and nobody
 * would ever stop it, so the process that claims the directory next stops it and starts a
 * server of its own (startEmbeddedPostgres).
 */

import { stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { runningServer } from './embedded-owner.js';
import { procStatFields } from './proc-stat.js';

/** How long the fast shutdown of an orphaned server may take (its checkpoint) before we give up. */
const ORPHAN_STOP_WAIT_MS = 120_000;

/**
 * Stops the server running on `pgDir`, if one does, in its fast mode (SIGINT to the
 * postmaster: open transactions roll back, a checkpoint is written), and resolves once it
 * has exited. Only a process that holds the directory's owner record calls this. The pid
 * in postmaster.pid is signalled only when it is that directory's postmaster: its working
 * directory is the data directory (Linux), or, where that cannot be read, it answers on
 * the recorded port with this directory's password (`answers`). Returns the pid stopped.
 */
export async function stopOrphanedServer(
  pgDir: string,
  answers: (port: number) => Promise<boolean>,
  signal?: AbortSignal,
): Promise<number | null> {
  const orphan = await runningServer(pgDir);
  if (!orphan) return null;
  const mine = await servesDirectory(orphan.pid, pgDir);
  if (mine === false || (mine === undefined && !(await answers(orphan.port)))) return null;
  try {
    process.kill(orphan.pid, 'SIGINT');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return null;
    throw err;
  }
  const since = Date.now();
  // The postmaster removes postmaster.pid as it exits; a zombie (no reaper in a container)
  // has exited too.
  while ((await runningServer(pgDir))?.pid === orphan.pid && !isZombie(orphan.pid)) {
    if (Date.now() - since > ORPHAN_STOP_WAIT_MS) {
      throw new Error(
        `the embedded PostgreSQL left running in ${pgDir} (pid ${orphan.pid}) did not stop within ` +
          `${ORPHAN_STOP_WAIT_MS / 1000} s of a fast shutdown; stop it (kill -INT ${orphan.pid}) and start again`,
      );
    }
    await delay(50, undefined, { signal });
  }
  return orphan.pid;
}

/** Whether `pid` runs in `dir` (a postmaster changes into its data directory); undefined where unknown. */
async function servesDirectory(pid: number, dir: string): Promise<boolean | undefined> {
  try {
    const [cwd, data] = await Promise.all([stat(`/proc/${pid}/cwd`), stat(dir)]);
    return cwd.dev === data.dev && cwd.ino === data.ino;
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  return procStatFields(pid)?.[0] === 'Z';
}
