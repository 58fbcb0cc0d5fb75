/**
 * The sign-in limiter's buckets (src/accounts/sign-in-limiter.ts, docs/web-app.md "Sessions
 * and CSRF") on each store it runs on: in memory always, and in Redis when TEST_REDIS_URL (or
 * REDIS_URL) names one, where two instances must count the same attempts.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type Attempt, SIGN_IN_POLICY, SignInLimiter } from '../../src/accounts/sign-in-limiter.js';
import { type App, buildServer } from '../../src/app.js';
import { ApiError } from '../../src/errors.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase } from '../helpers/database.js';
import { closedPort } from '../helpers/listening.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { freshAddress, uniqueEmail } from '../internal/helpers.js';

const LIMIT = SIGN_IN_POLICY.limit;
const PASSWORD = 'correct horse battery';
/** One attempt back every window / limit seconds: the longest wait a refused attempt is told. */
const TOKEN_SECONDS = SIGN_IN_POLICY.windowSeconds / LIMIT;

const redisUrl = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL;

/** Resolves with the Retry-After of a refused attempt; fails when the attempt was let through. */
async function refused(attempt: Promise<void>): Promise<number> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the attempt was let through').toBeInstanceOf(ApiError);
  const apiError = err as ApiError;
  expect(apiError.type).toBe('rate_limited');
  const retryAfter = Number(apiError.headers?.['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(TOKEN_SECONDS);
  expect(apiError.detail).toBe(`Too many sign-in attempts; try again in ${retryAfter} seconds`);
  return retryAfter;
}

/** An attempt from `ip`; a store outage, not expected here, fails the test through its log. */
const at = (ip: string): Attempt => ({
  ip,
  log: {
    warn: ({ err }) => {
      throw err;
    },
  },
});

/** A device id as DeviceCookies.deviceFor gives it (the cookie's nonce). */
const deviceId = () => randomBytes(16).toString('base64url');
const sessionId = () => randomBytes(16).toString('hex');

interface Backend {
  name: string;
  /**
   * Two limiters as two instances of the service have them: one over the same Redis keys, or
   * for memory the same one twice (an instance counts only its own attempts).
   */
  limiters(): [SignInLimiter, SignInLimiter];
}

function behaviour(backend: Backend) {
  /** Attempt `i` goes to either instance in turn. */
  const pair = () => {
    const [a, b] = backend.limiters();
    return (i: number) => (i % 2 === 0 ? a : b);
  };

  it('counts an IPv6 client by its /64: another address of the same network is the same client', async () => {
    const on = pair();
    const network = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    const host = () => `${network}:${[0, 0, 0, 0].map(() => randomBytes(2).toString('hex')).join(':')}`;
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(host()), uniqueEmail('v6'));
    await refused(on(LIMIT).take(at(host()), uniqueEmail('v6')));
    // The next /64 is another client.
    await on(0).take(at(`2001:db9:${randomBytes(2).toString('hex')}::1`), uniqueEmail('v6'));
  });

  it(`allows ${LIMIT} attempts per client address, then refuses any email from it`, async () => {
    const on = pair();
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(address), uniqueEmail('spray'));
    await refused(on(LIMIT).take(at(address), uniqueEmail('spray')));
    await refused(on(LIMIT + 1).take(at(address), uniqueEmail('spray'), deviceId()));
    await refused(on(LIMIT + 1).takeSignedIn(at(address), sessionId()));
    // Another address is not affected.
    await on(0).take(at(freshAddress()), uniqueEmail('spray'));
  });

  it(`allows ${LIMIT} attempts per email from any address, its case and surrounding space ignored`, async () => {
    const on = pair();
    const email = uniqueEmail('target');
    const spellings = [
      email,
      email.toUpperCase(),
      `  ${email} `,
      `\t${email[0]!.toUpperCase()}${email.slice(1)}`,
    ];
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(freshAddress()), spellings[i % spellings.length]!);
    await refused(on(LIMIT).take(at(freshAddress()), email));
    await refused(on(LIMIT).take(at(freshAddress()), email.toUpperCase()));
    // Another email is not affected, and neither is a signed-in check from any address.
    await on(0).take(at(freshAddress()), uniqueEmail('target'));
    await on(1).takeSignedIn(at(freshAddress()), sessionId());
  });

  it('a device cookie holder is not locked out by a stranger who spent the email’s attempts', async () => {
    const on = pair();
    const email = uniqueEmail('holder');
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(freshAddress()), email);
    await refused(on(LIMIT).take(at(freshAddress()), email));
    const device = deviceId();
    await on(1).take(at(freshAddress()), email, device);
    // A device has a bucket of its own: the same limit, from any address.
    for (let i = 1; i < LIMIT; i++) await on(i).take(at(freshAddress()), email, device);
    await refused(on(0).take(at(freshAddress()), email, device));
    await refused(on(1).take(at(freshAddress()), email, device));
    // Another device of the same person still has its own.
    await on(0).take(at(freshAddress()), email, deviceId());
  });

  it('a device’s attempts are not the email’s', async () => {
    const on = pair();
    const email = uniqueEmail('own');
    const device = deviceId();
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(freshAddress()), email, device);
    await refused(on(LIMIT).take(at(freshAddress()), email, device));
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(freshAddress()), email);
    await refused(on(LIMIT).take(at(freshAddress()), email));
  });

  it(`allows ${LIMIT} signed-in checks per session, whatever the email’s state`, async () => {
    const on = pair();
    const session = sessionId();
    for (let i = 0; i < LIMIT; i++) await on(i).takeSignedIn(at(freshAddress()), session);
    await refused(on(LIMIT).takeSignedIn(at(freshAddress()), session));
    await refused(on(LIMIT + 1).takeSignedIn(at(freshAddress()), session));
    // A colleague's session has its own.
    await on(0).takeSignedIn(at(freshAddress()), sessionId());
  });

  it('a refused attempt takes nothing from the other bucket it names', async () => {
    const on = pair();
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) await on(i).take(at(address), uniqueEmail('spray'));
    const email = uniqueEmail('bystander');
    // Refused for the address; the email still has all its attempts elsewhere.
    await refused(on(0).take(at(address), email));
    for (let i = 0; i < LIMIT - 1; i++) await on(i).take(at(freshAddress()), email);
    await on(1).take(at(freshAddress()), email);
    await refused(on(0).take(at(freshAddress()), email));
  });
}

describe('sign-in limiter in memory (REDIS_URL unset)', () => {
  const opened: SignInLimiter[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((l) => l.close()));
  });
  behaviour({
    name: 'memory',
    limiters() {
      const limiter = SignInLimiter.create(undefined);
      opened.push(limiter);
      return [limiter, limiter];
    },
  });
});

describe.skipIf(!redisUrl)('sign-in limiter shared through Redis (TEST_REDIS_URL or REDIS_URL)', () => {
  const opened: SignInLimiter[] = [];
  const prefixes: string[] = [];
  const prefix = () => {
    const p = `tagtrail:test:signin:${randomBytes(6).toString('hex')}:`;
    prefixes.push(p);
    return p;
  };
  afterAll(async () => {
    await Promise.all(opened.map((l) => l.close()));
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
  const pair = (): [SignInLimiter, SignInLimiter] => {
    const p = prefix();
    const limiters: [SignInLimiter, SignInLimiter] = [
      SignInLimiter.create(redisUrl, SIGN_IN_POLICY, p),
      SignInLimiter.create(redisUrl, SIGN_IN_POLICY, p),
    ];
    opened.push(...limiters);
    return limiters;
  };

  behaviour({ name: 'redis', limiters: pair });

  it('two instances count one email’s attempts together', async () => {
    const [a, b] = pair();
    const email = uniqueEmail('shared');
    for (let i = 0; i < LIMIT / 2; i++) await a.take(at(freshAddress()), email);
    for (let i = 0; i < LIMIT / 2; i++) await b.take(at(freshAddress()), email);
    await refused(a.take(at(freshAddress()), email));
    await refused(b.take(at(freshAddress()), email));
  });

  it('keeps each bucket under the prefix, by normalised email, until it would be full again', async () => {
    const p = prefix();
    const limiter = SignInLimiter.create(redisUrl, SIGN_IN_POLICY, p);
    opened.push(limiter);
    const email = uniqueEmail('keys');
    const address = freshAddress();
    const device = deviceId();
    const session = sessionId();
    await limiter.take(at(address), `  ${email.toUpperCase()} `);
    await limiter.take(at(address), email, device);
    await limiter.takeSignedIn(at(address), session);
    const redis = new Redis(redisUrl!);
    try {
      expect((await redis.keys(`${p}*`)).sort()).toEqual(
        [`${p}device:${device}`, `${p}email:${email}`, `${p}ip:${address}`, `${p}session:${session}`].sort(),
      );
      // One attempt spent comes back after window / limit: the key lives that long (and a
      // second for the clock), as the memory store drops a bucket once it is full again.
      const ttl = await redis.pttl(`${p}email:${email}`);
      expect(ttl).toBeGreaterThan((TOKEN_SECONDS - 5) * 1000);
      expect(ttl).toBeLessThanOrEqual(TOKEN_SECONDS * 1000 + 1000);
      const addressTtl = await redis.pttl(`${p}ip:${address}`);
      expect(addressTtl).toBeGreaterThan((3 * TOKEN_SECONDS - 5) * 1000);
      expect(addressTtl).toBeLessThanOrEqual(3 * TOKEN_SECONDS * 1000 + 1000);
    } finally {
      redis.disconnect();
    }
  });
});

describe.skipIf(!redisUrl)('sign-in limit of two servers sharing Redis (REDIS_URL)', () => {
  it('locks an email after its attempts on either server; the device cookie of one signs in on the other', async () => {
    const database = await createTestDatabase();
    const servers: { app: App; services: Services }[] = [];
    /** The keys this test makes under the service's own prefixes, deleted at the end. */
    const keys = new Set<string>();
    try {
      for (let i = 0; i < 2; i++) {
        const services = await createServices(database.db, {
          TAGTRAIL_ENV: 'production',
          secrets: TEST_SECRETS,
          REDIS_URL: redisUrl,
          TAGTRAIL_RATE_LIMIT: 1_000_000,
          TAGTRAIL_RATE_WINDOW_SECONDS: 60,
          TAGTRAIL_SIGNUP: 'open',
        });
        const app = await buildServer(services, { bodyLimit: 1048576 });
        servers.push({ app, services });
      }
      const email = uniqueEmail('twoservers');
      keys.add(`tagtrail:signin:email:${email}`);
      const post = (server: number, url: string, body: unknown, cookie?: string) => {
        const address = freshAddress();
        keys.add(`tagtrail:signin:ip:${address}`).add(`tagtrail:signup:ip:${address}`);
        return servers[server % 2]!.app.inject({
          method: 'POST',
          url,
          remoteAddress: address,
          headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
          payload: JSON.stringify(body),
        });
      };
      const signUp = await post(0, '/internal/auth/sign-up', {
        email,
        password: PASSWORD,
        organization_name: 'Two servers',
      });
      expect(signUp.statusCode, signUp.body).toBe(201);
      const device = /tagtrail_device=([^;]*)/.exec(String(signUp.headers['set-cookie']))?.[1];
      expect(device).toBeDefined();
      keys.add(`tagtrail:signin:device:${device!.split('.')[0]}`);

      for (let i = 0; i < LIMIT; i++) {
        expect((await post(i, '/internal/auth/sign-in', { email, password: 'a guess' })).statusCode).toBe(
          401,
        );
      }
      for (const server of [0, 1]) {
        const res = await post(server, '/internal/auth/sign-in', {
          email: email.toUpperCase(),
          password: PASSWORD,
        });
        expect(res.statusCode, res.body).toBe(429);
        expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(TOKEN_SECONDS);
      }
      const own = await post(
        1,
        '/internal/auth/sign-in',
        { email, password: PASSWORD },
        `tagtrail_device=${device}`,
      );
      expect(own.statusCode, own.body).toBe(200);
    } finally {
      for (const { app, services } of servers) {
        await app.close();
        await services.close();
      }
      await database.drop();
      const redis = new Redis(redisUrl!);
      try {
        if (keys.size > 0) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    }
  });
});

describe('a sign-in limiter store that cannot answer', () => {
  it('lets the attempt through and logs a warning on the request’s log', async () => {
    const limiter = new SignInLimiter({
      take: async () => {
        throw new Error('connection refused');
      },
      peek: async () => {
        throw new Error('connection refused');
      },
      close: async () => undefined,
    });
    const warnings: { err: unknown; msg: string }[] = [];
    const from = {
      ip: freshAddress(),
      log: { warn: (obj: { err: unknown }, msg: string) => warnings.push({ ...obj, msg }) },
    };
    for (let i = 0; i <= LIMIT; i++) await limiter.take(from, 'ann@example.test');
    await limiter.takeSignedIn(from, sessionId());
    expect(warnings).toHaveLength(LIMIT + 2);
    expect(warnings[0]).toEqual({
      err: expect.objectContaining({ message: 'connection refused' }),
      msg: 'sign-in limiter store unavailable; attempt let through',
    });
  });

  it('with REDIS_URL unreachable, sign-in answers as without a limiter: 401 then 200, never 500', async () => {
    const database = await createTestDatabase();
    const services = await createServices(database.db, {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      TAGTRAIL_RATE_LIMIT: 1_000_000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
      TAGTRAIL_SIGNUP: 'open',
    });
    const app = await buildServer(services, { bodyLimit: 1048576 });
    try {
      const email = uniqueEmail('outage');
      const address = freshAddress();
      const post = (url: string, body: unknown) =>
        app.inject({
          method: 'POST',
          url,
          remoteAddress: address,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
      const signUp = await post('/internal/auth/sign-up', {
        email,
        password: PASSWORD,
        organization_name: 'Outage',
      });
      expect(signUp.statusCode, signUp.body).toBe(201);
      for (let i = 0; i <= LIMIT; i++) {
        const res = await post('/internal/auth/sign-in', { email, password: 'a guess' });
        expect(res.statusCode, res.body).toBe(401);
      }
      const res = await post('/internal/auth/sign-in', { email, password: PASSWORD });
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      await app.close();
      await services.close();
      await database.drop();
    }
  });
});
