import { createServer } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import {
  browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
} from '../internal/helpers.js';
import { addMember, browserOf } from '../internal/members-helpers.js';

/** /internal/ requests per web session (TAGTRAIL_SESSION_RATE_LIMIT a minute). */
const LIMIT = 5;

/** The 429 of a session past its budget: the envelope, Retry-After, and the detail naming the same wait. */
function expectSessionLimited(res: LightMyRequestResponse): void {
  const error = expectInternalError(res, {
    status: 429,
    type: 'rate_limited',
    detail: /^Too many requests from this session; try again in \d+ seconds?$/,
  });
  const retryAfter = Number(res.headers['retry-after']);
  // LIMIT a minute: one request back every 60 / LIMIT seconds.
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60 / LIMIT);
  expect(error.detail).toContain(`in ${retryAfter} second`);
}

describe('TAGTRAIL_SESSION_RATE_LIMIT', () => {
  it('defaults to 3600 a minute and refuses less than one a second', () => {
    expect(loadConfig({}).TAGTRAIL_SESSION_RATE_LIMIT).toBe(3600);
    expect(loadConfig({ TAGTRAIL_SESSION_RATE_LIMIT: '600' }).TAGTRAIL_SESSION_RATE_LIMIT).toBe(600);
    expect(() => loadConfig({ TAGTRAIL_SESSION_RATE_LIMIT: '59' })).toThrow(
      /TAGTRAIL_SESSION_RATE_LIMIT="59": must be a whole number of at least 60/,
    );
  });
});

describe('/internal/ requests per web session', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ sessionRateLimit: LIMIT });
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After once a session spent its budget, before reading its row; colleagues and the same person’s other sessions are not affected', async () => {
    const admin = await t.signUp();
    const colleague = await browserOf(t, admin.orgId, await addMember(t, admin.orgId, 'editor'));
    const otherTab = await browserOf(t, admin.orgId, { id: admin.userId, email: admin.email });
    for (let i = 0; i < LIMIT; i++) expect((await admin.get('/internal/session')).statusCode).toBe(200);

    const lookups = vi.spyOn(t.services.internal.sessions, 'authenticate');
    try {
      expectSessionLimited(await admin.get('/internal/session'));
      // Writes draw on the same bucket, and are refused before anything is checked or done.
      expectSessionLimited(await admin.post('/internal/locations', { external_key: 'L-1', name: 'Dock' }));
      expect(lookups).not.toHaveBeenCalled();
    } finally {
      lookups.mockRestore();
    }
    const { rows } = await t.database.db.pool.query('SELECT 1 FROM locations WHERE org_id = $1', [
      admin.orgId,
    ]);
    expect(rows).toEqual([]);

    for (let i = 0; i < LIMIT; i++) {
      expect((await colleague.get('/internal/session')).statusCode).toBe(200);
      expect((await otherTab.get('/internal/session')).statusCode).toBe(200);
    }
    expectSessionLimited(await colleague.get('/internal/session'));
  });

  it('leaves the signed-out routes to their own limits: a spent session can still sign in again', async () => {
    const admin = await t.signUp({ password: 'correct horse battery' });
    for (let i = 0; i < LIMIT; i++) await admin.get('/internal/session');
    expectSessionLimited(await admin.get('/internal/session'));

    expect((await admin.get('/internal/auth/sign-up-state')).statusCode).toBe(200);
    const signIn = await admin.request({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: admin.email, password: 'correct horse battery' }),
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const token = /^tagtrail_session=([^;]*)/.exec(String(signIn.headers['set-cookie']))?.[1];
    const again = browser(t.app, token!, signIn.json().data.csrf_token, admin);
    expect((await again.get('/internal/session')).statusCode).toBe(200);
  });

  it('spends nothing for a cookie that is no session token: it is 401, without a database read', async () => {
    const lookups = vi.spyOn(t.database.db, 'withOrg');
    try {
      for (let i = 0; i < LIMIT + 2; i++) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/internal/session',
          headers: { cookie: 'tagtrail_session=not-a-token' },
        });
        expectInternalError(res, { status: 401, type: 'unauthorized' });
      }
      expect(lookups).not.toHaveBeenCalled();
    } finally {
      lookups.mockRestore();
    }
  });
});

describe('the session cookie’s verification', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ sessionRateLimit: LIMIT });
  });
  afterAll(() => t.close());

  it('happens once per /internal/ request, for the rate limit and the session alike: a forged cookie’s too, still 401 without a database read', async () => {
    const admin = await t.signUp();
    const verify = vi.spyOn(t.services.tokens, 'verify');
    const reads = vi.spyOn(t.database.db, 'withOrg');
    const get = (token: string) =>
      t.app.inject({
        method: 'GET',
        url: '/internal/session',
        headers: { cookie: `tagtrail_session=${token}` },
      });
    try {
      expect((await admin.get('/internal/session')).statusCode).toBe(200);
      expect(verify).toHaveBeenCalledTimes(1);
      expect(reads).toHaveBeenCalledTimes(1);

      // The genuine token with another signature: a signature check that fails, each time.
      const [header, payload, signature] = admin.token.split('.');
      const flipped = signature!.startsWith('A') ? `B${signature!.slice(1)}` : `A${signature!.slice(1)}`;
      for (const forged of [`${header}.${payload}.${flipped}`, 'not-a-token']) {
        verify.mockClear();
        reads.mockClear();
        expectInternalError(await get(forged), { status: 401, type: 'unauthorized' });
        expect(verify).toHaveBeenCalledTimes(1);
        expect(reads).not.toHaveBeenCalled();
      }
    } finally {
      verify.mockRestore();
      reads.mockRestore();
    }
  });
});

describe('a session bucket store that cannot answer', () => {
  it('lets the session’s requests through (a rate-limit outage must not take the web app down)', async () => {
    const listener = createServer();
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const { port } = listener.address() as { port: number };
    await new Promise((r) => listener.close(r));
    const database = await createTestDatabase();
    const services = await createServices(database.db, {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      TAGTRAIL_RATE_LIMIT: 1_000_000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
      TAGTRAIL_SESSION_RATE_LIMIT: LIMIT,
    });
    const app = await buildServer(services, { bodyLimit: 1048576 });
    try {
      const org = await services.organizations.create('Outage');
      const user = await services.internal.accounts.operatorUser(org.id);
      const issued = await services.internal.sessions.create(org.id, user.id);
      for (let i = 0; i < LIMIT + 1; i++) {
        const res = await app.inject({
          method: 'GET',
          url: '/internal/session',
          headers: { cookie: `tagtrail_session=${issued.token}` },
        });
        expect(res.statusCode, res.body).toBe(200);
      }
    } finally {
      await app.close();
      await services.close();
      await database.drop();
    }
  });
});

const redisUrl = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL;

describe.skipIf(!redisUrl)('session budget shared through Redis (TEST_REDIS_URL)', () => {
  let database: TestDatabase;
  const instances: { app: App; services: Services }[] = [];
  const sessionIds: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) {
      const services = await createServices(database.db, {
        TAGTRAIL_ENV: 'production',
        secrets: TEST_SECRETS,
        REDIS_URL: redisUrl,
        TAGTRAIL_RATE_LIMIT: 1_000_000,
        TAGTRAIL_RATE_WINDOW_SECONDS: 60,
        TAGTRAIL_SESSION_RATE_LIMIT: LIMIT,
      });
      const app = await buildServer(services, { bodyLimit: 1048576 });
      await app.ready();
      instances.push({ app, services });
    }
  });
  afterAll(async () => {
    for (const { app, services } of instances) {
      await app.close();
      await services.close();
    }
    await database?.drop();
    // The buckets would expire on their own; leave the shared Redis as it was found.
    const redis = new Redis(redisUrl!);
    try {
      const keys = sessionIds.map((id) => `tagtrail:internal:session:${id}`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });

  /** A session made by the first instance, sent alternately to either. */
  async function session(orgId: number, userId: number) {
    const issued = await instances[0]!.services.internal.sessions.create(orgId, userId);
    sessionIds.push(issued.sessionId);
    return (i: number) =>
      instances[i % 2]!.app.inject({
        method: 'GET',
        url: '/internal/session',
        headers: { cookie: `tagtrail_session=${issued.token}` },
      });
  }

  it('counts a session’s requests on every instance in one bucket; a colleague’s session has its own', async () => {
    const { services } = instances[0]!;
    const org = await services.organizations.create('Shared budget');
    const admin = await services.internal.accounts.operatorUser(org.id);
    const { rows } = await database.db.pool.query<{ id: number }>(
      `INSERT INTO users (org_id, email, role) VALUES ($1, 'colleague@shared.test', 'viewer') RETURNING id`,
      [org.id],
    );
    const busy = await session(org.id, admin.id);
    const colleague = await session(org.id, rows[0]!.id);

    const statuses: number[] = [];
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i <= LIMIT; i++) {
      last = await busy(i);
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429]);
    expectSessionLimited(last!);
    expectSessionLimited(await busy(LIMIT + 1));
    for (let i = 0; i < LIMIT; i++) expect((await colleague(i)).statusCode).toBe(200);
  });
});
