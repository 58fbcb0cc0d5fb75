import { type BucketPolicy, decide, peekDecision, type RateDecision, type RateLimitStore } from './types.js';

/** The longest time between sweeps. */
export const MAX_SWEEP_MS = 3_600_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** One process's buckets; the default with the embedded setup. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly policy: BucketPolicy,
    private readonly now: () => number = Date.now,
  ) {
    // A bucket that has refilled completely carries no information: drop it. At most hourly:
    // a window past 24.8 days (TAGTRAIL_RATE_WINDOW_SECONDS has no maximum) overflows a
    // timer's 32 bits, which Node turns into 1 ms, a sweep of every bucket each millisecond.
    this.sweeper = setInterval(() => this.sweep(), Math.min(policy.windowSeconds * 1000, MAX_SWEEP_MS));
    this.sweeper.unref();
  }

  async take(bucketId: string): Promise<RateDecision> {
    const now = this.now();
    const { tokens, decision } = decide(this.policy, this.tokensAt(bucketId, now));
    this.buckets.set(bucketId, { tokens, at: now });
    return decision;
  }

  async peek(bucketId: string): Promise<RateDecision> {
    return peekDecision(this.policy, this.tokensAt(bucketId, this.now()));
  }

  private tokensAt(bucketId: string, now: number): number {
    const perMs = this.policy.limit / (this.policy.windowSeconds * 1000);
    const bucket = this.buckets.get(bucketId);
    // A wall clock stepped back (NTP correcting a fast one) refills nothing, as in the Redis
    // store: a negative refill took an hour's tokens for an hour's step, 429 for that hour.
    return bucket
      ? Math.min(this.policy.limit, bucket.tokens + Math.max(0, now - bucket.at) * perMs)
      : this.policy.limit;
  }

  sweep(): void {
    const now = this.now();
    const perMs = this.policy.limit / (this.policy.windowSeconds * 1000);
    for (const [id, b] of this.buckets) {
      if (b.tokens + (now - b.at) * perMs >= this.policy.limit) this.buckets.delete(id);
    }
  }

  get size(): number {
    return this.buckets.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
