/**
 * What the embedded postmaster wrote on standard error, read for why it stopped: a server
 * that cannot start (or that died) says so in one FATAL or PANIC line, often among hundreds
 * of lines refusing our own pool's connections while it recovers.
 */

/**
 * The lines a starting or stopping server logs for each connection it turns away, and the
 * DETAIL or HINT after each: our pool asks every few milliseconds, so a recovery of two
 * seconds logged some 600 of them, burying the one line that said why it failed.
 */
const REFUSAL =
  /\b(FATAL|ERROR):\s+the database system is (not yet accepting connections|starting up|shutting down|in recovery mode)/;
const FOLLOW_UP = /^\S+ \S+ \S+ \[\d+\] (DETAIL|HINT|CONTEXT|STATEMENT):/;
const FAILURE = /\b(PANIC|FATAL):\s+(.*)$/;
const PANIC = /\bPANIC:\s+(.*)$/;

/** PostgreSQL's words (errno ENOSPC) when a file in the data directory cannot grow. */
const DISK_FULL = /No space left on device/;

/** How much of the log is kept in a message: its last lines, refusals left out. */
const KEPT_LINES = 30;

/** The log without the refused connections and their DETAIL/HINT lines, at most its last 30 lines. */
export function withoutRefusals(log: string): string {
  const kept: string[] = [];
  let skipping = false;
  for (const line of log.split('\n')) {
    if (REFUSAL.test(line)) {
      skipping = true;
      continue;
    }
    if (skipping && FOLLOW_UP.test(line)) continue;
    skipping = false;
    kept.push(line);
  }
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  const dropped = kept.length - KEPT_LINES;
  return (dropped > 0 ? [`(${dropped} earlier lines not shown)`, ...kept.slice(dropped)] : kept).join('\n');
}

/** The text after `pattern`'s last match among the log's lines that are not refusals. */
function lastMessage(log: string, pattern: RegExp): string | undefined {
  let message: string | undefined;
  for (const line of log.split('\n')) {
    if (REFUSAL.test(line)) continue;
    const match = pattern.exec(line);
    if (match) message = match[match.length - 1]?.trim();
  }
  return message;
}

/** The server's own last PANIC or FATAL (not a refused connection), without its prefix. */
export const failureOf = (log: string): string | undefined => lastMessage(log, FAILURE);

/**
 * Why a server that was serving stopped, from its log: a FATAL after it began its crash
 * restart ("terminating any other active server processes": its recovery failing), else
 * the PANIC that began it. Read only after its last "ready to accept connections", and not
 * any FATAL before a crash: those end single client sessions (a wrong password) and are no
 * reason. Undefined when it wrote none (killed by a signal).
 */
export function crashCause(log: string): string | undefined {
  const ready = log.lastIndexOf('ready to accept connections');
  const life = ready < 0 ? log : log.slice(ready);
  const restart = life.lastIndexOf('terminating any other active server processes');
  const recovery = restart < 0 ? undefined : failureOf(life.slice(restart));
  return recovery ?? lastMessage(life, PANIC);
}

export const isDiskFull = (text: string | undefined): boolean => text !== undefined && DISK_FULL.test(text);

/** What to tell an operator whose data directory's disk is full: the cause, and that freeing space is the whole cure. */
export const DISK_FULL_ADVICE =
  'the disk holding the data directory is full: free space on it (nothing committed is lost: ' +
  'PostgreSQL replays its write-ahead log once it can write)';

/**
 * PostgreSQL's own HINT after a recovery it could not finish ("some data is corrupted … use
 * the last backup") reads as if restoring were needed; on a full disk it is not.
 */
const NO_RESTORE = 'its HINT about corrupted data and the last backup does not apply';

/** The error of a postmaster that exited before it accepted connections. */
export function startFailure(code: number | null, log: string): Error {
  const failure = failureOf(log);
  const lead = isDiskFull(failure)
    ? `embedded PostgreSQL exited (${code}) while starting: ${DISK_FULL_ADVICE}; ${NO_RESTORE}. It said: ${failure}`
    : `embedded PostgreSQL exited (${code}) while starting`;
  return Object.assign(new Error(`${lead}:\n${withoutRefusals(log)}`), {
    failure,
    diskFull: isDiskFull(failure),
  });
}

/** The last `limit` characters a running postmaster wrote: enough to hold why it stopped. */
export class LogTail {
  private text = '';
  constructor(private readonly limit = 64 * 1024) {}
  push = (chunk: Buffer | string): void => {
    this.text += chunk.toString();
    if (this.text.length > 2 * this.limit) this.text = this.text.slice(-this.limit);
  };
  toString(): string {
    return this.text.slice(-this.limit);
  }
}
