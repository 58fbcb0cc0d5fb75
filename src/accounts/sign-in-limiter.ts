import { ApiError } from '../errors.js';
import { addressBucket } from '../http/rate-limit/address-bucket.js';
import { createBucketStore } from '../http/rate-limit/create.js';
import type { BucketPolicy, RateDecision, RateLimitStore } from '../http/rate-limit/types.js';
import { normalEmail } from './device-cookies.js';

/**
 * 10 password attempts per 15 minutes, per client address and per email, device cookie or
 * session (docs/web-app.md "Sessions and CSRF").
 */
export const SIGN_IN_POLICY: BucketPolicy = { limit: 10, windowSeconds: 15 * 60 };

/**
 * Open sign-up, per client address: 5 at once, then one every 12 minutes (5 per hour).
 * Each sign-up costs an argon2 hash and creates an organization (docs/operations.md).
 */
export const SIGN_UP_POLICY: BucketPolicy = { limit: 5, windowSeconds: 3600 };

/**
 * Invitations issued or resent, per organization: 50 at once (a team invited in one sitting),
 * then 50 an hour. Each may mail a link to any address from the deployment's sender, and each
 * answers whether the address has an account in any organization (409), so without a bound
 * one administrator (anyone, with open sign-up) could mail without end and test every
 * address of a list against the deployment's accounts.
 */
export const INVITATION_POLICY: BucketPolicy = { limit: 50, windowSeconds: 3600 };

/** Who makes an attempt: the client address, and where a store outage is logged (the request). */
export interface Attempt {
  ip: string;
  log: { warn(obj: { err: unknown }, msg: string): void };
}

/**
 * Token buckets for password attempts (sign-in, password change), separate from the API's:
 * in memory, or in Redis under their own prefix when REDIS_URL is set, so every instance
 * counts the same attempts. A store outage lets the attempt through, as the API does.
 *
 * Every attempt draws on its client address's bucket. A sign-in also draws on the email's
 * bucket, unless the browser shows a device cookie of that email (DeviceCookies): then on
 * the device's own bucket instead, so a stranger spending the email's budget from elsewhere
 * does not lock out a browser that has signed in before. A password or code checked for a
 * signed-in person draws on the session's bucket: the session already proves a sign-in.
 */
export class SignInLimiter {
  constructor(private readonly store: RateLimitStore) {}

  /** `prefix`: the Redis keys' (tests give each run its own). */
  static create(
    redisUrl: string | undefined,
    policy: BucketPolicy = SIGN_IN_POLICY,
    prefix = 'tagtrail:signin:',
  ): SignInLimiter {
    return new SignInLimiter(createBucketStore(redisUrl, policy, prefix));
  }

  /**
   * A sign-in attempt: the address's bucket, and the device's (`device`: the id of a device
   * cookie verified for this email) or else the email's. 429 `rate_limited` with Retry-After
   * when either is empty.
   */
  take(from: Attempt, email: string, device: string | null = null): Promise<void> {
    return this.takeAll(from, [
      addressBucket(from.ip),
      device ? `device:${device}` : `email:${normalEmail(email)}`,
    ]);
  }

  /** A password or code checked for a signed-in person: the address's and the session's buckets. */
  takeSignedIn(from: Attempt, sessionId: string): Promise<void> {
    return this.takeAll(from, [addressBucket(from.ip), `session:${sessionId}`]);
  }

  /**
   * One token from each bucket in turn, the client address's first, stopping at the first
   * that is empty: an address past its limit spends nothing of the emails, devices or
   * sessions it names, or one address spraying every email would drain all their buckets
   * while its own limit held it.
   */
  private async takeAll(from: Attempt, buckets: string[]): Promise<void> {
    for (const bucket of buckets) {
      let decision: RateDecision;
      try {
        decision = await this.store.take(bucket);
      } catch (err) {
        // Logged, as the API's limiter does: while it lasts, guessing is not limited.
        from.log.warn({ err }, 'sign-in limiter store unavailable; attempt let through');
        return;
      }
      if (!decision.allowed) {
        const retryAfter = decision.retryAfterSeconds;
        throw new ApiError(
          'rate_limited',
          `Too many sign-in attempts; try again in ${retryAfter} seconds`,
          undefined,
          { 'retry-after': String(retryAfter) },
        );
      }
    }
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
