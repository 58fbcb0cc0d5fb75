/**
 * Bounds a log line that can repeat at the rate of the traffic (one per refused message or
 * per request answered 503): in an outage its volume would add to the outage, on a full disk
 * to the disk. What it leaves out is counted into the next line it lets through.
 */
export class LogThrottle {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(private readonly intervalMs = 60_000) {}

  /** Calls `log(suppressed)` unless this key logged within the interval. */
  maybe(key: string, log: (suppressed: number) => void, now = Date.now()): void {
    const entry = this.last.get(key);
    if (entry && now - entry.at < this.intervalMs) {
      entry.suppressed++;
      return;
    }
    this.last.set(key, { at: now, suppressed: 0 });
    if (this.last.size > 10_000) this.last.clear();
    log(entry?.suppressed ?? 0);
  }
}

/** How often a failure that repeats by the request or by the message is logged, per kind. */
export const FAILURE_LOG_INTERVAL_MS = 1_000;

/** The count of lines left out, as a log field, when there were any. */
export const counted = (suppressed: number): { suppressed?: number } =>
  suppressed > 0 ? { suppressed } : {};
