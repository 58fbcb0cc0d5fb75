/** Rate-limit stores: built from the configuration, failing open in an outage, shared through Redis. */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { RedisRateLimitStore } from '../../src/http/rate-limit/redis-store.js';
import type { RateDecision, RateLimitStore } from '../../src/http/rate-limit/types.js';
import { createServices, type Services } from '../../src/services.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { closedPort } from '../helpers/listening.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { expectRateLimited, LIMIT, WINDOW_SECONDS } from './rate-limit-expectations.js';

/** The budget is configured from TAGTRAIL_RATE_LIMIT / TAGTRAIL_RATE_WINDOW_SECONDS. */
describe('rate limit store from the configuration', () => {
  it('builds a memory store with the configured budget when REDIS_URL is unset', async () => {
    const { createRateLimitStore } = await import('../../src/services.js');
    const store = createRateLimitStore({
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
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
    async peek(): Promise<RateDecision> {
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
        const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
      // What bounds the wait is the store's own limits (the command timeout or the retry
      // count), not ioredis's reconnect back-off, which never ends while Redis is away:
      // each take settles with one of those two errors.
      for (let i = 0; i < 3; i++) {
        await expect(store.take('k')).rejects.toThrow(/Command timed out|max retries per request/);
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

  it('peek reports the shared bucket without taking a token', async () => {
    const p = prefix();
    const a = new RedisRateLimitStore(redisUrl!, policy, p);
    const b = new RedisRateLimitStore(redisUrl!, policy, p);
    try {
      expect(await b.peek('key:p')).toMatchObject({ allowed: true, remaining: LIMIT, resetSeconds: 0 });
      await a.take('key:p');
      expect(await b.peek('key:p')).toMatchObject({ allowed: true, remaining: LIMIT - 1 });
      expect(await b.peek('key:p')).toMatchObject({ allowed: true, remaining: LIMIT - 1 });
      expect(await a.take('key:p')).toMatchObject({ allowed: true, remaining: LIMIT - 2 });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refills over time (Redis server clock)', async () => {
    const p = prefix();
    // 2 per 4 s: one token back every 2 s, so the three takes would have to be 2 s apart
    // on a loaded machine before the third found a token already back.
    const a = new RedisRateLimitStore(redisUrl!, { limit: 2, windowSeconds: 4 }, p);
    const b = new RedisRateLimitStore(redisUrl!, { limit: 2, windowSeconds: 4 }, p);
    try {
      expect((await a.take('k')).allowed).toBe(true);
      expect((await b.take('k')).allowed).toBe(true);
      const denied = await a.take('k');
      expect(denied.allowed).toBe(false);
      // At most 2 s away (ceil of the time to the next token: 2, or 1 if the takes were slow).
      expect([1, 2]).toContain(denied.retryAfterSeconds);
      await new Promise((r) => setTimeout(r, 2_200));
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
      // Until ioredis has noticed the closed connection a take may still be sent on it (and
      // time out): wait for the store to call itself unavailable rather than for a fixed
      // moment, then keep asking while it reconnects with a growing back-off: every take
      // fails at once.
      for (const deadline = Date.now() + 10_000; ; ) {
        const outcome = await store.take('k').then(
          () => 'taken',
          (e: Error) => e.message,
        );
        if (/Redis rate-limit store unavailable/.test(outcome)) break;
        if (Date.now() > deadline) throw new Error(`the store never noticed the cut; last: ${outcome}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // The relay stays down for the whole loop: a take that waited in ioredis's offline
      // queue for the reconnection would never settle. Each fails at once, before any I/O,
      // with the store's own "unavailable" error.
      for (let i = 0; i < 10; i++) {
        await expect(store.take('k')).rejects.toThrow(/Redis rate-limit store unavailable/);
        await new Promise((r) => setTimeout(r, 50));
      }

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
            secrets: TEST_SECRETS,
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

describe('a wall clock stepped back (NTP correcting a clock that ran fast)', () => {
  it('takes no tokens from the memory store: requests go on as before the step', async () => {
    let now = 1_700_000_000_000;
    const store = new MemoryRateLimitStore({ limit: 3, windowSeconds: 60 }, () => now);
    const t = await buildTestApp({ rateLimit: store });
    try {
      const key = await (await t.createOrg()).key([]);
      const get = () => t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
      const first = await get();
      expect(first.statusCode).toBe(200);
      now -= 3_600_000;
      const after = await get();
      // The step took 180 tokens (an hour of refill at 3 a minute): 429 for an hour.
      expect(after.statusCode, after.body).toBe(200);
      expect(Number(after.headers['x-ratelimit-remaining'])).toBe(
        Number(first.headers['x-ratelimit-remaining']) - 1,
      );
    } finally {
      await t.close();
      await store.close();
    }
  });
});
