import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import type { FastifyPluginAsync, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { RedisRateLimitStore } from '../../src/http/rate-limit/redis-store.js';
import type { RateDecision, RateLimitStore } from '../../src/http/rate-limit/types.js';
import { type App, buildServer } from '../../src/http/server.js';
import { createServices, type Services } from '../../src/services.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';

const LIMIT = 3;
const WINDOW_SECONDS = 60;

/** A POST route, so a request can fail with 415 after the rate limit was taken. */
const echoRoute: FastifyPluginAsync = async (app) => {
  app.post('/api/v1/__rate-limit-echo', { config: { scopes: [] } }, async (request) => ({
    data: request.body ?? null,
  }));
};

/** Every public response carries the three headers, as integers. */
function expectRateLimitHeaders(res: LightMyRequestResponse, limit = LIMIT) {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  expect(Number(res.headers['x-ratelimit-remaining'])).toBeLessThanOrEqual(limit);
}

function expectRateLimited(res: LightMyRequestResponse) {
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

/** A fresh client address per test, so the per-address buckets do not leak between tests. */
let addressCounter = 0;
const nextAddress = () => `10.0.${Math.floor(++addressCounter / 250)}.${(addressCounter % 250) + 1}`;

describe('rate limiting per API key (memory store)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      rateLimit: new MemoryRateLimitStore({ limit: LIMIT, windowSeconds: WINDOW_SECONDS }),
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
    await t.services.keys.revoke(org.id, key.id);
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

/** The budget is configured from TAGTRAIL_RATE_LIMIT / TAGTRAIL_RATE_WINDOW_SECONDS. */
describe('rate limit store from the configuration', () => {
  it('builds a memory store with the configured budget when REDIS_URL is unset', async () => {
    const { createRateLimitStore } = await import('../../src/services.js');
    const store = createRateLimitStore({
      TAGTRAIL_ENV: 'production',
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 2,
      TAGTRAIL_RATE_WINDOW_SECONDS: 10,
    });
    try {
      expect(store).toBeInstanceOf(MemoryRateLimitStore);
      const first = await store.take('k');
      expect(first).toMatchObject({ allowed: true, limit: 2, remaining: 1, resetSeconds: 5 });
      await store.take('k');
      expect((await store.take('k')).allowed).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('reads the budget from the environment with defaults', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(loadConfig({})).toMatchObject({ TAGTRAIL_RATE_LIMIT: 6000, TAGTRAIL_RATE_WINDOW_SECONDS: 60 });
    expect(loadConfig({ TAGTRAIL_RATE_LIMIT: '5', TAGTRAIL_RATE_WINDOW_SECONDS: '2' })).toMatchObject({
      TAGTRAIL_RATE_LIMIT: 5,
      TAGTRAIL_RATE_WINDOW_SECONDS: 2,
    });
    expect(() => loadConfig({ TAGTRAIL_RATE_LIMIT: '0' })).toThrow(/TAGTRAIL_RATE_LIMIT/);
    expect(() => loadConfig({ TAGTRAIL_RATE_WINDOW_SECONDS: 'soon' })).toThrow(
      /TAGTRAIL_RATE_WINDOW_SECONDS/,
    );
  });
});

describe('rate limit store outage', () => {
  class BrokenStore implements RateLimitStore {
    calls = 0;
    async take(): Promise<RateDecision> {
      this.calls++;
      throw new Error('connection refused');
    }
    async close(): Promise<void> {}
  }
  const broken = new BrokenStore();
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ rateLimit: broken });
  });
  afterAll(() => t.close());

  it('fails open: the request goes through without rate-limit headers', async () => {
    const key = await (await t.createOrg()).key([]);
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      expect(res.headers['retry-after']).toBeUndefined();
    }
    expect(broken.calls).toBe(LIMIT + 2);
  });

  it('still authenticates when failing open', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.detail).toBe('Missing authorization header');
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('Redis rate-limit store that cannot reach Redis', () => {
  it('fails each take within a bounded time, so requests are let through promptly', async () => {
    const store = new RedisRateLimitStore(`redis://127.0.0.1:${await closedPort()}`, {
      limit: LIMIT,
      windowSeconds: WINDOW_SECONDS,
    });
    const t = await buildTestApp({ rateLimit: store });
    try {
      const key = await (await t.createOrg()).key([]);
      for (let i = 0; i < 6; i++) {
        const started = Date.now();
        const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        // ioredis's reconnect back-off must not hold every request for seconds.
        expect(Date.now() - started).toBeLessThan(1000);
      }
    } finally {
      await t.close();
    }
  });
});

const redisUrl = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL;

describe.skipIf(!redisUrl)('rate limiting shared through Redis (TEST_REDIS_URL or REDIS_URL)', () => {
  const policy = { limit: LIMIT, windowSeconds: WINDOW_SECONDS };
  const prefixes: string[] = [];
  const prefix = () => {
    const p = `tagtrail:test:${randomBytes(6).toString('hex')}:`;
    prefixes.push(p);
    return p;
  };
  afterAll(async () => {
    // The buckets would expire on their own; leave the shared Redis as it was found.
    const redis = new Redis(redisUrl!);
    try {
      for (const p of prefixes) {
        const keys = await redis.keys(`${p}*`);
        if (keys.length > 0) await redis.del(...keys);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('two store instances share one budget per bucket', async () => {
    const p = prefix();
    const a = new RedisRateLimitStore(redisUrl!, policy, p);
    const b = new RedisRateLimitStore(redisUrl!, policy, p);
    try {
      const decisions = [
        await a.take('key:x'),
        await b.take('key:x'),
        await a.take('key:x'),
        await b.take('key:x'),
        await a.take('key:x'),
      ];
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
      expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
      for (const d of decisions) expect(d.limit).toBe(LIMIT);
      const denied = decisions[3]!;
      expect(Number.isInteger(denied.retryAfterSeconds)).toBe(true);
      expect(denied.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(denied.retryAfterSeconds).toBeLessThanOrEqual(20);
      expect(denied.resetSeconds).toBeLessThanOrEqual(60);
      // Another bucket is untouched.
      expect(await b.take('key:y')).toMatchObject({ allowed: true, remaining: 2 });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refills over time (Redis server clock)', async () => {
    const p = prefix();
    // 2 per second: one token back every 500 ms.
    const a = new RedisRateLimitStore(redisUrl!, { limit: 2, windowSeconds: 1 }, p);
    const b = new RedisRateLimitStore(redisUrl!, { limit: 2, windowSeconds: 1 }, p);
    try {
      expect((await a.take('k')).allowed).toBe(true);
      expect((await b.take('k')).allowed).toBe(true);
      const denied = await a.take('k');
      expect(denied.allowed).toBe(false);
      expect(denied.retryAfterSeconds).toBe(1);
      await new Promise((r) => setTimeout(r, 600));
      expect((await b.take('k')).allowed).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('fails fast while the connection is lost and recovers when Redis is back', async () => {
    // A TCP relay in front of Redis that the test can cut and restore.
    const target = new URL(redisUrl!);
    const sockets = new Set<Socket>();
    const relay = (port = 0) =>
      new Promise<Server>((resolve) => {
        const server = createServer((client) => {
          const upstream = tcpConnect(Number(target.port || 6379), target.hostname);
          for (const s of [client, upstream]) {
            sockets.add(s);
            s.on('close', () => sockets.delete(s));
            s.on('error', () => undefined);
          }
          client.pipe(upstream).pipe(client);
        });
        server.listen(port, '127.0.0.1', () => resolve(server));
      });
    let server = await relay();
    const port = (server.address() as { port: number }).port;
    const viaRelay = new URL(redisUrl!);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(port);
    const store = new RedisRateLimitStore(viaRelay.toString(), policy, prefix());
    try {
      expect((await store.take('k')).allowed).toBe(true);

      await new Promise((r) => {
        server.close(r);
        for (const s of sockets) s.destroy();
      });
      // Give ioredis a moment to notice the closed connection, then keep asking while it
      // reconnects with a growing back-off: every take fails at once.
      await new Promise((r) => setTimeout(r, 100));
      const outageEnds = Date.now() + 1500;
      let failures = 0;
      while (Date.now() < outageEnds) {
        const started = Date.now();
        await expect(store.take('k')).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(100);
        failures++;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(failures).toBeGreaterThan(5);

      server = await relay(port);
      const deadline = Date.now() + 10_000;
      let recovered: RateDecision | undefined;
      while (!recovered && Date.now() < deadline) {
        recovered = await store.take('k').catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return undefined;
        });
      }
      // The bucket survived in Redis: the second token of three.
      expect(recovered).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await store.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it('two server instances over one database answer 429 from the shared budget', async () => {
    const t = await buildTestApp();
    const p = prefix();
    const stores = [
      new RedisRateLimitStore(redisUrl!, policy, p),
      new RedisRateLimitStore(redisUrl!, policy, p),
    ];
    const instances: { app: App; services: Services }[] = [];
    try {
      for (const store of stores) {
        const services = await createServices(
          t.database.db,
          {
            TAGTRAIL_ENV: 'production',
            REDIS_URL: redisUrl,
            TAGTRAIL_RATE_LIMIT: LIMIT,
            TAGTRAIL_RATE_WINDOW_SECONDS: WINDOW_SECONDS,
          },
          store,
        );
        const app = await buildServer(services, { bodyLimit: 1048576 });
        await app.ready();
        instances.push({ app, services });
      }
      const key = await (await t.createOrg()).key([]);
      const statuses: number[] = [];
      let last: LightMyRequestResponse | undefined;
      for (let i = 0; i < LIMIT + 1; i++) {
        const { app } = instances[i % 2]!;
        last = await app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expectRateLimited(last!);
    } finally {
      for (const { app, services } of instances) {
        await app.close();
        await services.close();
      }
      await t.close();
    }
  });
});
