/** Outcome of taking one token from a caller's bucket. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available; meaningful when not allowed. */
  retryAfterSeconds: number;
}

export interface RateLimitStore {
  take(bucket: string): Promise<RateDecision>;
  /** The bucket's state as `take` would report it, without taking a token (`allowed`: one is there). */
  peek(bucket: string): Promise<RateDecision>;
  close(): Promise<void>;
}

export interface BucketPolicy {
  /** Bucket capacity: the burst a caller may spend at once. */
  limit: number;
  /** Seconds to refill an empty bucket completely. */
  windowSeconds: number;
}

/** The state of a bucket holding `tokens`, nothing taken. */
export function peekDecision(policy: BucketPolicy, tokens: number): RateDecision {
  const perSecond = policy.limit / policy.windowSeconds;
  const allowed = tokens >= 1;
  return {
    allowed,
    limit: policy.limit,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((policy.limit - tokens) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
  };
}

/** Pure token-bucket arithmetic shared by the stores. */
export function decide(
  policy: BucketPolicy,
  tokensBefore: number,
): { tokens: number; decision: RateDecision } {
  const perSecond = policy.limit / policy.windowSeconds;
  const allowed = tokensBefore >= 1;
  const tokens = allowed ? tokensBefore - 1 : tokensBefore;
  return {
    tokens,
    decision: {
      allowed,
      limit: policy.limit,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((policy.limit - tokens) / perSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
    },
  };
}
