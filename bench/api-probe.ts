/**
 * How long the API answers while ingest works (bench:ingest `--probe`): `/healthz` asked
 * every few milliseconds over the measured window. It touches neither the database nor a
 * key, so its time is the wait for the service's event loop, which ingest shares with the
 * API. Asked from a child process of its own: from the service's process, the probe's own
 * client would wait for the same event loop.
 *
 * Protocol over the IPC channel: the parent sends `start` with the URL and the interval, the
 * child answers `started` after its first answer; on `stop` it answers `stopped` with the
 * figures and exits.
 */
import { fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextMessage } from './child-messages.js';

/** Answer times of the probe's requests, in milliseconds. */
export interface ProbeFigures {
  /** Requests answered (any status). */
  answered: number;
  /** Requests that got no answer (refused, reset). */
  failed: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The figures of `latencies` (ms, any order) and of `failed` requests; nearest-rank quantiles. */
export function probeFigures(latencies: readonly number[], failed: number): ProbeFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted.length === 0 ? 0 : Math.round(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]! * 10) / 10;
  return { answered: sorted.length, failed, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}

/**
 * Asks `${url}/healthz` every `everyMs` (after each answer) until `signal` aborts; resolves
 * with the figures. `onFirst` is called after the first request, answered or not.
 */
export async function probeLoop(
  url: string,
  everyMs: number,
  signal: AbortSignal,
  onFirst: () => void = () => undefined,
): Promise<ProbeFigures> {
  const latencies: number[] = [];
  let failed = 0;
  let first = true;
  while (!signal.aborted) {
    const started = performance.now();
    try {
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
    } catch {
      failed++;
    }
    if (first) {
      first = false;
      onFirst();
    }
    await sleep(everyMs, undefined, { signal }).catch(() => undefined);
  }
  return probeFigures(latencies, failed);
}

export interface ApiProbe {
  /** Stops asking and resolves with the figures once the child has exited. */
  stop(): Promise<ProbeFigures>;
}

type ToChild = { type: 'start'; url: string; everyMs: number } | { type: 'stop' };
type FromChild = { type: 'started' } | { type: 'stopped'; figures: ProbeFigures };

/** Starts the child and resolves once it has had its first answer. */
export async function startApiProbe(url: string, everyMs = 10): Promise<ApiProbe> {
  // No --cpu-prof or --expose-gc of the parent: the service's process is the one measured.
  const child = fork(new URL(import.meta.url), ['--child'], { execArgv: [] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const next = () => nextMessage<FromChild>(child, 'the API probe');
  const started = next();
  child.send({ type: 'start', url, everyMs } satisfies ToChild);
  try {
    await started;
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    async stop() {
      const stopped = next();
      child.send({ type: 'stop' } satisfies ToChild);
      const m = await stopped;
      await exited;
      if (m.type !== 'stopped') throw new Error(`the API probe answered ${m.type} to stop`);
      return m.figures;
    },
  };
}

/** The child's side. */
function child(): void {
  const stop = new AbortController();
  const reply = (m: FromChild) => process.send?.(m);
  process.on('message', (m: ToChild) => {
    if (m.type === 'start') {
      probeLoop(m.url, m.everyMs, stop.signal, () => reply({ type: 'started' })).then((figures) =>
        // Exits once the figures are sent.
        process.send?.({ type: 'stopped', figures } satisfies FromChild, () => process.exit(0)),
      );
    } else if (m.type === 'stop') {
      stop.abort();
    }
  });
  process.on('disconnect', () => {
    stop.abort();
    setImmediate(() => process.exit(0));
  });
}

if (process.argv.includes('--child') && process.send) child();
