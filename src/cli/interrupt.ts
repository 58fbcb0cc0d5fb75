/**
 * A command other than `serve` stopped by SIGTERM or SIGINT (Ctrl-C, a supervisor, a
 * timer's stop): without handlers Node dies at once, leaving a backup's `.partial` file, an
 * embedded PostgreSQL the command started (running on with nobody to stop it) and its owner
 * record. With them, the first signal ends what the command waits for (`interruption`: the
 * wait for another process's server, a server's start), runs the cleanups the command
 * registered (`onInterrupt`: remove partial output, close the database and stop the server
 * it started), newest first, and exits with 128 + the signal's number (130 for SIGINT, 143
 * for SIGTERM), as a shell reports a command a signal ended. A second signal exits at once
 * with status 1.
 *
 * A reader of its standard output that goes away (`tagtrail export assets | head`) stops
 * it the same way, quietly, with 141 (128 + SIGPIPE), as a shell reports a writer its
 * pipe's reader left: the write's EPIPE is not the command failing.
 */

const controller = new AbortController();
const cleanups = new Set<() => Promise<unknown>>();
let stopping: NodeJS.Signals | undefined;

/** Aborted by the first signal; its reason is an `Interrupted`. */
export const interruption: AbortSignal = controller.signal;

/** The exit status of a command a signal stopped. */
export const SIGNAL_EXIT_STATUS: Record<StopCause, number> = { SIGINT: 130, SIGTERM: 143, SIGPIPE: 141 };

type StopCause = 'SIGINT' | 'SIGTERM' | 'SIGPIPE';

/** What a command's work rejects with once a signal ended it. */
export class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/** Runs `cleanup` if a signal stops the command; returns the unregistering. */
export function onInterrupt(cleanup: () => Promise<unknown>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/**
 * `work` (a command's whole action, which cleans up after itself when it fails) is waited
 * for before a signal's exit: give it `interruption` so that it fails promptly.
 */
export function settledBeforeExit<T>(work: Promise<T>): Promise<T> {
  const off = onInterrupt(() => work.catch(() => undefined));
  return work.finally(off);
}

/** Whether a signal is stopping the command: its exit status is then the signal's. */
export function interrupted(): boolean {
  return stopping !== undefined;
}

/** Installs the handlers, for a command other than `serve` (which has its own). */
export function stopCommandOnSignals(): void {
  process.on('SIGTERM', () => interrupt('SIGTERM'));
  process.on('SIGINT', () => interrupt('SIGINT'));
  // Without a listener a failed write to stdout is an uncaught error with a stack trace;
  // other failures of a write reach the command through its own callback or promise.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') return;
    outputClosed = true;
    if (!stopping) interrupt('SIGPIPE');
  });
}

/** Standard output's reader went away (its 'error' event, which comes before the write's). */
let outputClosed = false;

/**
 * Whether `err` is a write to standard output whose reader went away: then the command is
 * stopping as if by SIGPIPE (see above), and its caller reports nothing.
 */
export function stoppedByClosedOutput(err: unknown): boolean {
  return outputClosed && (err as { code?: unknown }).code === 'EPIPE';
}

function interrupt(signal: StopCause): void {
  if (stopping) {
    process.stderr.write(`${signal}: exiting at once\n`);
    process.exit(1);
  }
  stopping = signal;
  if (signal !== 'SIGPIPE') process.stderr.write(`${signal}: stopping\n`);
  controller.abort(new Interrupted(signal));
  void (async () => {
    for (const cleanup of [...cleanups].reverse()) {
      await cleanup().catch((err: unknown) => {
        process.stderr.write(`while stopping: ${(err as Error).message}\n`);
      });
    }
  })().finally(() => process.exit(SIGNAL_EXIT_STATUS[signal]));
}
