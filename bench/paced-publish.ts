/**
 * Publishing at a steady rate, as a site's readers do, instead of a whole backlog at once:
 * what rate the service keeps up with, and how long a message then waits for its
 * acknowledgement (which the service sends once the message is committed).
 *
 * Each message has its due time, `index / rate` after the start, and its latency is
 * counted from then, not from when it was sent: a publisher that falls behind (its event
 * loop busy) adds to the latency instead of hiding it (no coordinated omission).
 */

/** Acknowledgement latencies, in milliseconds. */
export interface AckLatency {
  p50: number;
  p99: number;
  max: number;
  /**
   * The medians of the first and of the last tenth of the messages (by due time): about
   * equal when the service keeps up; a queue that grows through the run makes the last
   * much the larger.
   */
  firstTenthP50: number;
  lastTenthP50: number;
}

/** How often the due messages are sent: every few milliseconds, the ones due by then. */
const TICK_MS = 2;

/**
 * Publishes `messages` in order, `perSecond` in all, and resolves with each message's
 * latency from its due time to its acknowledgement (ms), in the messages' order. Rejects
 * with the first publish that fails.
 */
export function publishAtRate<M>(
  messages: readonly M[],
  perSecond: number,
  publish: (m: M) => Promise<unknown>,
  now: () => number = () => performance.now(),
): Promise<number[]> {
  if (!(perSecond > 0)) throw new Error('the rate is a positive number of messages per second');
  const latencies = new Array<number>(messages.length).fill(0);
  return new Promise((resolve, reject) => {
    const start = now();
    let sent = 0;
    let acknowledged = 0;
    let failed = false;
    if (messages.length === 0) resolve(latencies);
    const tick = () => {
      if (failed) return;
      const due = Math.min(messages.length, Math.floor(((now() - start) * perSecond) / 1000) + 1);
      for (; sent < due; sent++) {
        const i = sent;
        const dueAt = start + (i * 1000) / perSecond;
        publish(messages[i]!).then(
          () => {
            latencies[i] = now() - dueAt;
            if (++acknowledged === messages.length) resolve(latencies);
          },
          (err: unknown) => {
            failed = true;
            reject(err);
          },
        );
      }
      if (sent < messages.length) setTimeout(tick, TICK_MS);
    };
    tick();
  });
}

/** Latencies in ascending order (a copy). */
const ascending = (latencies: readonly number[]): number[] => [...latencies].sort((a, b) => a - b);

/** The q-quantile of latencies already in ascending order (nearest rank), 0 of none. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * The median, the 99th percentile and the largest of `latencies` (ms, one decimal, in the
 * messages' due order), and the medians of their first and last tenths.
 */
export function summarizeLatencies(latencies: readonly number[]): AckLatency {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  const tenth = Math.max(1, Math.floor(latencies.length / 10));
  // Sorted once for the three figures of the whole run, once for each tenth.
  const all = ascending(latencies);
  return {
    p50: round(quantile(all, 0.5)),
    p99: round(quantile(all, 0.99)),
    max: round(quantile(all, 1)),
    firstTenthP50: round(quantile(ascending(latencies.slice(0, tenth)), 0.5)),
    lastTenthP50: round(quantile(ascending(latencies.slice(-tenth)), 0.5)),
  };
}
