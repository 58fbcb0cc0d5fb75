import type { Read } from './adapters/types.js';

/**
 * When a read was observed, and so whether a repeated message is a redelivery: the
 * reader's clock is trusted within these bounds of our receipt (docs/ingest.md,
 * "Redeliveries").
 */
export interface ClockPolicy {
  /** A reader clock further ahead of our receipt than this is not trusted. */
  maxFutureSkewMs: number;
  /** Nor one further behind (store-and-forward readers may lag, but not this much). */
  maxPastSkewMs: number;
}

export const DEFAULT_CLOCK_POLICY: ClockPolicy = {
  maxFutureSkewMs: 5 * 60_000,
  maxPastSkewMs: 7 * 24 * 3600_000,
};

/** The reader's time when present and plausible, otherwise the time we received it. */
export function observedAt(readerTime: number | null, receivedAt: number, policy: ClockPolicy): number {
  if (readerTime === null) return receivedAt;
  if (readerTime > receivedAt + policy.maxFutureSkewMs) return receivedAt;
  if (readerTime < receivedAt - policy.maxPastSkewMs) return receivedAt;
  return readerTime;
}

/**
 * Whether a reader message is one observation that a repeat of its bytes repeats (then it
 * is stored once: docs/ingest.md, "Redeliveries"): it has reads, and every read's
 * observation time is the reader's own. A read without a reader time, or with one we do
 * not trust, is placed at our receipt, so the same bytes received again are a new
 * observation (a reader reporting every second what it sees) and are stored again.
 */
export function carriesReaderTimes(reads: readonly Read[], receivedAt: number, policy: ClockPolicy): boolean {
  return (
    reads.length > 0 &&
    reads.every((r) => r.readerTime !== null && observedAt(r.readerTime, receivedAt, policy) === r.readerTime)
  );
}

/**
 * How long a message's digest is kept. A redelivery later than this carries reader times
 * (at most maxFutureSkew ahead of the first receipt) more than maxPastSkew behind its own
 * receipt: not trusted, so carriesReaderTimes is false for it and it is a new observation.
 */
export const digestWindowMs = (policy: ClockPolicy) => policy.maxPastSkewMs + policy.maxFutureSkewMs;
