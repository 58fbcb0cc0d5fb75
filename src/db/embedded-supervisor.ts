/**
 * An owned embedded server's postmaster: waiting for it to accept connections, and keeping
 * it running until asked to stop (src/db/embedded.ts starts it).
 */

import type { ChildProcess } from 'node:child_process';
import type { EmbeddedPostgres } from './embedded.js';
import { crashCause, isDiskFull, LogTail, startFailure, withoutRefusals } from './postmaster-log.js';

/**
 * Resolves once the postmaster logs that it accepts connections; rejects if it exits first,
 * or with `signal`'s reason when that aborts (the caller stops the postmaster then).
 */
export function waitUntilReady(child: ChildProcess, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const settle = (err?: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      child.stderr?.off('data', onData);
      child.stderr?.resume();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(
      () => settle(new Error(`embedded PostgreSQL did not start:\n${withoutRefusals(log)}`)),
      timeoutMs,
    );
    const onAbort = () => settle(signal?.reason as Error);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('ready to accept connections')) settle();
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr?.on('data', onData);
    child.once('exit', (code) => settle(startFailure(code, log)));
  });
}

/** What the supervisor of an owned server reports (the service logs it). */
export type SupervisionEvent =
  | {
      kind: 'exited';
      code: number | null;
      signal: NodeJS.Signals | null;
      /** Its last PANIC or FATAL line, if it wrote one: why it stopped. */
      failure: string | undefined;
      /** It stopped because it could not write to its disk (ENOSPC). */
      diskFull: boolean;
    }
  | { kind: 'restart-failed'; attempt: number; error: Error; diskFull: boolean }
  | { kind: 'restarted'; attempts: number; downMs: number };

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

export interface SuperviseOptions {
  /**
   * The free bytes of the data directory's file system. Given, a restart that failed on a
   * full disk waits for them to grow before the next attempt, instead of replaying the
   * write-ahead log every 5 s (0.3–1 s of CPU each in the disk-full drill) for as long as
   * the disk stays full.
   */
  freeBytes?: () => Promise<number>;
}

/** Free space that must appear on a full disk before the next attempt (a WAL segment is 16 MiB). */
const FREED_BYTES = 1024 * 1024;
/**
 * Free space past which the disk is no longer taken for full: room made between the failed
 * attempt and the first reading would otherwise count as none, and the next attempt wait
 * out DISK_FULL_RETRY_MS.
 */
const ROOMY_BYTES = 64 * 1024 * 1024;
/** How often a full disk is looked at, and the longest wait for it before an attempt anyway. */
const DISK_POLL_MS = 500;
const DISK_FULL_RETRY_MS = 60_000;

/** Longest wait between two restart attempts. */
const MAX_RESTART_DELAY_MS = 5_000;

/**
 * Keeps an owned server running: if its postmaster dies (killed, crashed) while we did not
 * ask it to stop, a new one is started on the same data directory and port, so the pool
 * reconnects by itself and nothing acknowledged is lost (PostgreSQL replays its WAL). The
 * first attempts often fail while the old server's backends still hold its shared memory;
 * they are retried, waiting 250 ms and doubling up to 5 s, until one succeeds or `stop`.
 */
export function supervise(
  first: ChildProcess,
  spawnServer: () => ChildProcess,
  { freeBytes }: SuperviseOptions = {},
): Pick<EmbeddedPostgres, 'stop' | 'watch'> {
  let current = first;
  let stopping = false;
  let restarting: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  const watchers = new Set<(event: SupervisionEvent) => void>();
  const emit = (event: SupervisionEvent) => {
    for (const watcher of watchers) {
      try {
        watcher(event);
      } catch {
        // A failing watcher must not stop the supervision.
      }
    }
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      wake = done;
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
    });

  /** Until the disk has gained room (or a minute passed, or `stop`); unmeasurable, as usual. */
  const untilFreed = async (free: () => Promise<number>) => {
    const measure = () => free().catch(() => undefined);
    const before = await measure();
    if (before === undefined || before >= ROOMY_BYTES) return pause(MAX_RESTART_DELAY_MS);
    const giveUp = Date.now() + DISK_FULL_RETRY_MS;
    while (!stopping && Date.now() < giveUp) {
      await pause(DISK_POLL_MS);
      const now = await measure();
      if (now === undefined || now >= before + FREED_BYTES || now >= ROOMY_BYTES) return;
    }
  };

  const restart = async () => {
    const downSince = Date.now();
    for (let attempt = 1; !stopping; attempt++) {
      const child = spawnServer();
      current = child;
      try {
        await waitUntilReady(child, 60_000);
        if (stopping) return;
        follow(child);
        emit({ kind: 'restarted', attempts: attempt, downMs: Date.now() - downSince });
        return;
      } catch (err) {
        if (!hasExited(child)) {
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
        }
        if (stopping) return;
        const diskFull = isDiskFull((err as Error).message);
        emit({ kind: 'restart-failed', attempt, error: err as Error, diskFull });
        if (diskFull && freeBytes) await untilFreed(freeBytes);
        else await pause(Math.min(250 * 2 ** (attempt - 1), MAX_RESTART_DELAY_MS));
      }
    }
  };

  const follow = (child: ChildProcess) => {
    // Its log from now on, kept for its last lines: a server that dies says why there (a
    // backend's PANIC on a full disk, then the recovery that could not write either).
    const tail = new LogTail();
    child.stderr?.on('data', tail.push);
    child.once('exit', (code, signal) => {
      if (stopping || child !== current) return;
      const failure = crashCause(tail.toString());
      emit({ kind: 'exited', code, signal, failure, diskFull: isDiskFull(failure) });
      restarting = restart().finally(() => {
        restarting = undefined;
      });
    });
  };
  follow(first);

  let stopped: Promise<void> | undefined;
  return {
    watch(watcher) {
      watchers.add(watcher);
      return () => watchers.delete(watcher);
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        wake?.();
        const child = current;
        if (!hasExited(child)) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
          await exited;
        }
        await restarting;
      })();
      return stopped;
    },
  };
}
