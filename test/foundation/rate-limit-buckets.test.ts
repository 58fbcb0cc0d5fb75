/** Rate-limit buckets (per API key, per client address) and the headers on every kind of response. */
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import {
  expectRateLimited,
  expectRateLimitHeaders,
  LIMIT,
  WINDOW_SECONDS,
} from './rate-limit-expectations.js';

/** A POST route, so a request can fail with 415 after the rate limit was taken. */
const echoRoute: FastifyPluginAsync = async (app) => {
  app.post('/api/v1/__rate-limit-echo', { config: { scopes: [] } }, async (request) => ({
    data: request.body ?? null,
  }));
};

const STILL = Date.parse('2026-01-01T00:00:00Z');

/** A fresh client address per test, so the per-address buckets do not leak between tests. */
let addressCounter = 0;
const nextAddress = () => `10.0.${Math.floor(++addressCounter / 250)}.${(addressCounter % 250) + 1}`;

describe('rate limiting per API key (memory store)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      // Time stands still for these buckets, so the exact Retry-After below does not depend
      // on how long a loaded machine takes over the requests before it (refill over time is
      // src/http/rate-limit/memory-store.test.ts's, on a clock moved by hand).
      rateLimit: new MemoryRateLimitStore({ limit: LIMIT, windowSeconds: WINDOW_SECONDS }, () => STILL),
      routes: [echoRoute],
    });
  });
  afterAll(() => t.close());

  const me = (token: string | undefined, remoteAddress = nextAddress()) =>
    t.app.inject({
      method: 'GET',
      url: '/api/v1/orgs/me',
      headers: token === undefined ? {} : bearer(token),
      remoteAddress,
    });

  it('lets a key make LIMIT requests, then answers 429 rate_limited with Retry-After', async () => {
    const key = await (await t.createOrg()).key([]);
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await me(key.token);
      expect(res.statusCode).toBe(200);
      expectRateLimitHeaders(res);
      remaining.push(String(res.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const limited = await me(key.token);
    expectRateLimited(limited);
    // Empty bucket of 3 per 60 s: one token comes back in 20 s, the bucket is full in 60 s.
    expect(limited.headers['retry-after']).toBe('20');
    expect(limited.headers['x-ratelimit-reset']).toBe('60');
  });

  it('keys the bucket on the API key, not on the client address', async () => {
    const key = await (await t.createOrg()).key([]);
    // Every request from a different address: they still share the key's bucket.
    for (let i = 0; i < LIMIT; i++) expect((await me(key.token, nextAddress())).statusCode).toBe(200);
    expectRateLimited(await me(key.token, nextAddress()));
  });

  it('gives two keys separate buckets, even keys of the same organization', async () => {
    const org = await t.createOrg();
    const a = await org.key([]);
    const b = await org.key([]);
    const address = nextAddress();
    for (let i = 0; i < LIMIT; i++) expect((await me(a.token, address)).statusCode).toBe(200);
    expectRateLimited(await me(a.token, address));

    const other = await me(b.token, address);
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
    expect(other.json().data.api_key_id).toBe(b.id);
  });

  it('limits requests without a key per client address', async () => {
    const address = nextAddress();
    for (let i = 0; i < LIMIT; i++) {
      const res = await me(undefined, address);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.detail).toBe('Missing authorization header');
      expectRateLimitHeaders(res);
    }
    expectRateLimited(await me(undefined, address));
    // Another address has its own bucket.
    const elsewhere = await me(undefined, nextAddress());
    expect(elsewhere.statusCode).toBe(401);
    expect(elsewhere.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('limits an IPv6 client without a key by its /64, and an IPv4-mapped address as the IPv4 one', async () => {
    const network = `2001:db8:${++addressCounter}:7`;
    for (let i = 0; i < LIMIT; i++)
      expect((await me(undefined, `${network}::${i + 1}`)).statusCode).toBe(401);
    expectRateLimited(await me(undefined, `${network}:ffff:1:2:3`));
    expect((await me(undefined, `2001:db8:${++addressCounter}:7::1`)).statusCode).toBe(401);

    const v4 = nextAddress();
    for (let i = 0; i < LIMIT; i++) await me(undefined, i % 2 === 0 ? v4 : `::ffff:${v4}`);
    expectRateLimited(await me(undefined, `::ffff:${v4}`));
  });

  it('limits requests with an invalid key per client address, all invalid keys together', async () => {
    const address = nextAddress();
    const garbage = ['not-a-jwt', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 'still-not-a-jwt'];
    for (const token of garbage) {
      const res = await me(token, address);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.detail).toBe('Invalid or expired token');
      expectRateLimitHeaders(res);
    }
    // A fourth made-up token does not get a fresh bucket.
    expectRateLimited(await me('yet-another-made-up-token', address));
    // ...and a missing header from the same address shares it too.
    expectRateLimited(await me(undefined, address));
  });

  it('does not let a client escape its own key bucket by also sending bad requests', async () => {
    const key = await (await t.createOrg()).key([]);
    const address = nextAddress();
    for (let i = 0; i < LIMIT; i++) await me(undefined, address);
    expectRateLimited(await me(undefined, address));
    // The address bucket is empty; the key has its own, untouched budget.
    const res = await me(key.token, address);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('puts the headers on 401 responses', async () => {
    const res = await me(undefined);
    expect(res.statusCode).toBe(401);
    expectRateLimitHeaders(res);
    expect(res.headers['x-ratelimit-remaining']).toBe('2');
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('puts the headers on 401 for a revoked key (counted on that key)', async () => {
    const org = await t.createOrg();
    const key = await org.key([]);
    await t.services.keys.revoke(cliCaller(org.id), key.id);
    const res = await me(key.token);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.detail).toBe('API key has been revoked');
    expectRateLimitHeaders(res);
  });

  it('puts the headers on 404 for an unknown /api/v1 path', async () => {
    const key = await (await t.createOrg()).key([]);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/no-such-resource',
      headers: bearer(key.token),
      remoteAddress: nextAddress(),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.type).toBe('not_found');
    expectRateLimitHeaders(res);
    expect(res.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('puts the headers on 415 and counts the request', async () => {
    const key = await (await t.createOrg()).key([]);
    const post = (contentType: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/__rate-limit-echo',
        headers: { ...bearer(key.token), 'content-type': contentType },
        payload: contentType === 'application/json' ? '{"a":1}' : 'a=1',
        remoteAddress: nextAddress(),
      });
    const ok = await post('application/json');
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ data: { a: 1 } });
    expectRateLimitHeaders(ok);

    const res = await post('text/plain');
    expect(res.statusCode).toBe(415);
    expect(res.json().error.type).toBe('unsupported_media_type');
    expectRateLimitHeaders(res);
    expect(res.headers['x-ratelimit-remaining']).toBe('1');

    const form = await post('multipart/form-data; boundary=x');
    expect(form.statusCode).toBe(415);
    expect(form.headers['x-ratelimit-remaining']).toBe('0');

    // The bucket is now empty: even a well-formed request is limited.
    expectRateLimited(await post('application/json'));
  });

  it('puts the headers on 405 and on the OpenAPI document', async () => {
    const notAllowed = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/orgs/me',
      remoteAddress: nextAddress(),
    });
    expect(notAllowed.statusCode).toBe(405);
    expectRateLimitHeaders(notAllowed);

    const doc = await t.app.inject({ method: 'GET', url: '/api/openapi.json', remoteAddress: nextAddress() });
    expect(doc.statusCode).toBe(200);
    expectRateLimitHeaders(doc);
  });
});
