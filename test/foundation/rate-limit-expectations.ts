/** The budget both rate-limit test files configure, and what a limited or counted response looks like. */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

export const LIMIT = 3;
export const WINDOW_SECONDS = 60;

/** Every public response carries the three headers, as integers. */
export function expectRateLimitHeaders(res: LightMyRequestResponse, limit = LIMIT) {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  expect(Number(res.headers['x-ratelimit-remaining'])).toBeLessThanOrEqual(limit);
}

export function expectRateLimited(res: LightMyRequestResponse) {
  expect(res.statusCode).toBe(429);
  const error = res.json().error;
  expect(error).toMatchObject({ type: 'rate_limited', status: 429, title: 'Too Many Requests' });
  expect(typeof error.detail).toBe('string');
  expect(error.request_id).toEqual(expect.any(String));
  expect(error).not.toHaveProperty('fields');
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expectRateLimitHeaders(res);
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
}
