import { randomInt } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { SignupMode } from '../../src/accounts/account-service.js';
import { type App, type AppOptions, buildServer } from '../../src/app.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ERROR_STATUS } from '../helpers/error-envelope.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

export interface InternalTestOptions {
  signup?: SignupMode;
  trustProxy?: boolean;
  /** TAGTRAIL_SMTP_URL: invitations are mailed through it. */
  smtpUrl?: string;
  /** TAGTRAIL_PUBLIC_URL: where mailed and shown links point. */
  publicUrl?: string;
  /** TAGTRAIL_SESSION_RATE_LIMIT; default: out of reach (the fuzz suite sends thousands on one session). */
  sessionRateLimit?: number;
  /** The server's logger (none by default). */
  logger?: AppOptions['logger'];
}

/** A signed-in browser: the session cookie and the CSRF token, sent on every call. */
export interface Browser {
  token: string;
  csrf: string;
  orgId: number;
  userId: number;
  email: string;
  cookie: string;
  request(options: InjectOptions & { csrf?: string | null }): Promise<LightMyRequestResponse>;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body?: unknown): Promise<LightMyRequestResponse>;
  del(url: string): Promise<LightMyRequestResponse>;
}

export interface InternalTestApp {
  app: App;
  services: Services;
  database: TestDatabase;
  /** Signs up a new organization (open sign-up or the first user) and returns its browser. */
  signUp(input?: { email?: string; password?: string; organization?: string }): Promise<Browser>;
  /** A browser for an organization created by an operator, as `tagtrail session token` makes one. */
  browserFor(orgId: number): Promise<Browser>;
  newOrg(name?: string): Promise<{ id: number; browser: Browser }>;
  close(): Promise<void>;
}

/** A client address of its own, so per-address sign-in buckets do not leak between tests. */
export const freshAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** A JSON POST without a session, from an address of its own (so no rate limit is shared). */
export const postSignedOut = (t: Pick<InternalTestApp, 'app'>, url: string, body: unknown) =>
  t.app.inject({
    method: 'POST',
    url,
    remoteAddress: freshAddress(),
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });

let emails = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}-${Date.now()}-${++emails}@example.test`;

export function browser(
  app: App,
  token: string,
  csrf: string,
  who: { orgId: number; userId: number; email: string },
): Browser {
  const cookie = `tagtrail_session=${token}`;
  const b: Browser = {
    token,
    csrf,
    cookie,
    ...who,
    request({ csrf: csrfOverride, headers, ...options }) {
      const h: Record<string, string> = { cookie, ...(headers as Record<string, string>) };
      const token = csrfOverride === undefined ? csrf : csrfOverride;
      if (token !== null && options.method !== 'GET') h['x-csrf-token'] = token;
      return app.inject({ ...options, headers: h });
    },
    get: (url) => b.request({ method: 'GET', url }),
    post: (url, body) =>
      b.request({
        method: 'POST',
        url,
        ...(body === undefined
          ? {}
          : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      }),
    del: (url) => b.request({ method: 'DELETE', url }),
  };
  return b;
}

export async function buildInternalApp(options: InternalTestOptions = {}): Promise<InternalTestApp> {
  const database = await createTestDatabase();
  const services = await createServices(
    database.db,
    {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1_000_000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
      TAGTRAIL_SIGNUP: options.signup ?? 'open',
      TAGTRAIL_TRUST_PROXY: options.trustProxy ?? false,
      TAGTRAIL_SMTP_URL: options.smtpUrl,
      TAGTRAIL_PUBLIC_URL: options.publicUrl,
      TAGTRAIL_SMTP_FROM: 'tagtrail <no-reply@depot.test>',
      TAGTRAIL_SESSION_RATE_LIMIT: options.sessionRateLimit ?? 1_000_000,
    },
    new MemoryRateLimitStore({ limit: 1_000_000, windowSeconds: 60 }),
  );
  const app = await buildServer(services, { bodyLimit: 1048576, logger: options.logger });
  await app.ready();
  let orgs = 0;
  const t: InternalTestApp = {
    app,
    services,
    database,
    async signUp(input = {}) {
      const email = input.email ?? uniqueEmail();
      const res = await app.inject({
        method: 'POST',
        url: '/internal/auth/sign-up',
        remoteAddress: freshAddress(),
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          email,
          password: input.password ?? 'correct horse battery',
          organization_name: input.organization ?? `Org ${++orgs}`,
        }),
      });
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      return browser(app, sessionCookieOf(res)!, data.csrf_token, {
        orgId: data.organization.id,
        userId: data.user.id,
        email,
      });
    },
    async browserFor(orgId) {
      const user = await services.internal.accounts.operatorUser(orgId);
      const issued = await services.internal.sessions.create(orgId, user.id);
      return browser(app, issued.token, issued.csrfToken, { orgId, userId: user.id, email: user.email });
    },
    async newOrg(name = `Org ${++orgs}`) {
      const org = await services.organizations.create(name);
      return { id: org.id, browser: await t.browserFor(org.id) };
    },
    async close() {
      await app.close();
      await services.close();
      await database.drop();
    },
  };
  return t;
}

/** The Set-Cookie header of a response, as one string. */
export function setCookieOf(res: LightMyRequestResponse): string | undefined {
  const h = res.headers['set-cookie'];
  return Array.isArray(h) ? h[0] : h;
}

/** The session token a response sets, or undefined. */
export function sessionCookieOf(res: LightMyRequestResponse): string | undefined {
  const m = /^tagtrail_session=([^;]*)/.exec(setCookieOf(res) ?? '');
  return m?.[1] || undefined;
}

/** The error envelope, on /internal/: the request id, and never the API's rate-limit headers. */
export function expectInternalError(
  res: LightMyRequestResponse,
  expected: { status: number; type?: string; detail?: string | RegExp },
) {
  const context = `${res.raw.req.method} ${res.raw.req.url} -> ${res.statusCode} ${res.body.slice(0, 400)}`;
  expect(res.statusCode, context).toBe(expected.status);
  expect(String(res.headers['content-type']), context).toMatch(/^application\/json/);
  expect(res.headers['x-request-id'], context).toEqual(expect.any(String));
  expectNoRateLimitHeaders(res);
  const body = res.json() as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  const error = body.error;
  expect(error.status, context).toBe(res.statusCode);
  expect(ERROR_STATUS[error.type as string], context).toBe(res.statusCode);
  expect(error.instance, context).toBe((res.raw.req.url ?? '').split('?')[0]);
  expect(error.request_id, context).toBe(res.headers['x-request-id']);
  if (expected.type) expect(error.type, context).toBe(expected.type);
  if (typeof expected.detail === 'string') expect(error.detail, context).toBe(expected.detail);
  else if (expected.detail) expect(error.detail, context).toMatch(expected.detail);
  return error as { type: string; detail: string; fields?: { field: string; code: string }[] };
}

export function expectNoRateLimitHeaders(res: LightMyRequestResponse) {
  const names = Object.keys(res.headers).filter((k) => k.toLowerCase().startsWith('x-ratelimit-'));
  expect(names, 'rate-limit headers on /internal/').toEqual([]);
}

/** Inserts a location by SQL (the locations service is someone else's moving target). */
export async function insertLocation(
  t: InternalTestApp,
  orgId: number,
  values: { external_key: string; name: string; parent_id?: number | null; description?: string },
): Promise<number> {
  const { rows } = await t.database.db.pool.query<{ id: number }>(
    `INSERT INTO locations (org_id, external_key, name, parent_id, description) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [orgId, values.external_key, values.name, values.parent_id ?? null, values.description ?? null],
  );
  return rows[0]!.id;
}

export async function insertAsset(
  t: InternalTestApp,
  orgId: number,
  values: { external_key: string; name: string; tag?: string },
): Promise<number> {
  const { rows } = await t.database.db.pool.query<{ id: number }>(
    'INSERT INTO assets (org_id, external_key, name) VALUES ($1, $2, $3) RETURNING id',
    [orgId, values.external_key, values.name],
  );
  const id = rows[0]!.id;
  if (values.tag) {
    await t.database.db.pool.query(
      `INSERT INTO tags (org_id, tag_type, value, asset_id) VALUES ($1, 'rfid', $2, $3)`,
      [orgId, values.tag, id],
    );
  }
  return id;
}
