import { Redis } from 'ioredis';
import { type BucketPolicy, peekDecision, type RateDecision, type RateLimitStore } from './types.js';

/** The bucket as stored, and the Redis server's clock: the start of both scripts. */
const READ_BUCKET = `
local limit = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
`;

/**
 * Refill and take in one atomic script, timed by the Redis server's clock so every
 * instance sees the same bucket. Returns tokens after the take (x1000) and allowed.
 */
const TAKE_SCRIPT = `${READ_BUCKET}if tokens == nil then tokens = limit; at = now end
tokens = math.min(limit, tokens + math.max(0, now - at) * per_ms)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((limit - tokens) / per_ms) + 1000)
return { tostring(tokens), allowed }
`;

/** The tokens a bucket holds now (x1), refilled but not stored: nothing is taken. */
const PEEK_SCRIPT = `${READ_BUCKET}if tokens == nil then return tostring(limit) end
return tostring(math.min(limit, tokens + math.max(0, now - at) * per_ms))
`;

/** Longest a request waits for Redis before it is let through without a decision. */
const COMMAND_TIMEOUT_MS = 500;

/** Buckets shared by every instance through Redis (`REDIS_URL`). */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;
  private connectedOnce = false;

  constructor(
    url: string,
    private readonly policy: BucketPolicy,
    private readonly prefix = 'tagtrail:rl:',
  ) {
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      lazyConnect: false,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    this.redis.defineCommand('tagtrailTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis.defineCommand('tagtrailPeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
    this.redis.on('error', () => undefined); // reported per request through rejected commands
    this.redis.on('ready', () => {
      this.connectedOnce = true;
    });
  }

  async take(bucketId: string): Promise<RateDecision> {
    this.assertUsable();
    const perSecond = this.policy.limit / this.policy.windowSeconds;
    const [tokensText, allowed] = (await (
      this.redis as unknown as {
        tagtrailTake(key: string, limit: number, perMs: number): Promise<[string, number]>;
      }
    ).tagtrailTake(this.prefix + bucketId, this.policy.limit, perSecond / 1000)) as [string, number];
    const tokens = Number(tokensText);
    return {
      allowed: allowed === 1,
      limit: this.policy.limit,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((this.policy.limit - tokens) / perSecond),
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
    };
  }

  async peek(bucketId: string): Promise<RateDecision> {
    this.assertUsable();
    const perSecond = this.policy.limit / this.policy.windowSeconds;
    const tokensText = await (
      this.redis as unknown as { tagtrailPeek(key: string, limit: number, perMs: number): Promise<string> }
    ).tagtrailPeek(this.prefix + bucketId, this.policy.limit, perSecond / 1000);
    return peekDecision(this.policy, Number(tokensText));
  }

  private assertUsable(): void {
    // Once connected, a lost connection fails at once (the caller goes without a decision)
    // rather than holding every request in the offline queue while ioredis reconnects.
    if (this.connectedOnce && this.redis.status !== 'ready') {
      throw new Error(`Redis rate-limit store unavailable (${this.redis.status})`);
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
