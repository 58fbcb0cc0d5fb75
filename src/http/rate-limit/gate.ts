import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { RateDecision, RateLimitStore } from './types.js';

/**
 * Takes one token from `bucket`, puts the X-RateLimit-* headers on the reply (unless
 * `headers: false`) and throws the 429 `rate_limited` (with Retry-After) when the bucket is
 * empty. A store that cannot answer lets the request through: a rate-limit outage must not
 * take the service down with it.
 */
export async function takeToken(
  store: RateLimitStore,
  bucket: string,
  request: FastifyRequest,
  reply: FastifyReply,
  options: {
    headers?: boolean;
    what?: string;
    /** The 429's detail, for a caller that reads it (the web app shows it as it is). */
    detail?: (retryAfterSeconds: number) => string;
  } = {},
): Promise<void> {
  let decision: RateDecision;
  try {
    decision = await store.take(bucket);
  } catch (err) {
    request.log.warn({ err }, 'rate limit store unavailable; request let through');
    return;
  }
  if (options.headers !== false) {
    reply.header('x-ratelimit-limit', decision.limit);
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-reset', decision.resetSeconds);
  }
  if (!decision.allowed) {
    throw new ApiError(
      'rate_limited',
      options.detail?.(decision.retryAfterSeconds) ??
        `Rate limit of ${decision.limit} ${options.what ?? 'requests'} exceeded; retry later`,
      undefined,
      { 'retry-after': String(decision.retryAfterSeconds) },
    );
  }
}
