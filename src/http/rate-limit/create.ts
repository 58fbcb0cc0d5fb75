import { MemoryRateLimitStore } from './memory-store.js';
import { RedisRateLimitStore } from './redis-store.js';
import type { BucketPolicy, RateLimitStore } from './types.js';

/**
 * A store of token buckets under one policy: in Redis under its own key prefix when
 * REDIS_URL is set (every instance counts the same requests), otherwise in this process.
 */
export function createBucketStore(
  redisUrl: string | undefined,
  policy: BucketPolicy,
  prefix: string,
): RateLimitStore {
  return redisUrl ? new RedisRateLimitStore(redisUrl, policy, prefix) : new MemoryRateLimitStore(policy);
}
