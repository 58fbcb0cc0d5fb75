import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { RunningService } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestService } from '../helpers/service.js';
import { type Browser, buildWeb, launch } from './browser.js';

/** The first administrator a suite signs up over HTTP before the browser opens. */
export interface SignUp {
  email: string;
  password?: string;
  organization_name: string;
}

export interface Session {
  /** `tagtrail_session=…`, ready for a `cookie` header. */
  cookie: string;
  csrf: string;
  orgId: number;
}

/** What a browser suite runs against: the whole service on a fresh database, and Chromium. */
export interface WebSite {
  database: TestDatabase;
  service: RunningService;
  base: string;
  browser: Browser;
  page: Page;
  /** Present when the suite signed up in `startWebSite`; the browser holds its cookie. */
  session?: Session;
  /** The /internal/ API as the signed-in browser calls it (cookie and CSRF token). */
  internal(
    method: string,
    path: string,
    body?: unknown,
    // biome-ignore lint/suspicious/noExplicitAny: the service's JSON, checked where used
  ): Promise<{ status: number; body: Record<string, any> }>;
  close(): Promise<void>;
}

export const PASSWORD = 'correct horse battery staple';

/**
 * Builds the web app, starts the service (HTTP and MQTT on free ports, a data directory of
 * its own) on a fresh database, optionally signs an administrator up and hands the browser
 * the session cookie, then opens Chromium. `expectedFailures` are the paths whose 4xx
 * answers the suite causes on purpose (see `launch`).
 */
export async function startWebSite(options: {
  name: string;
  expectedFailures?: string[];
  signUp?: SignUp;
  /** Further settings of the service (TLS files, say). */
  env?: Record<string, string>;
}): Promise<WebSite> {
  await buildWeb();
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), `tagtrail-web-${options.name}-`));
  let service: RunningService | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await service?.stop();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    service = await startTestService({
      DATABASE_URL: database.url,
      TAGTRAIL_DATA_DIR: dataDir,
      ...options.env,
    });
    const base = service.url;
    const session = options.signUp ? await signUp(base, options.signUp) : undefined;
    browser = await launch(base, options.expectedFailures ?? []);
    if (session) {
      await browser.context.addCookies([
        {
          name: 'tagtrail_session',
          value: session.cookie.split('=')[1]!,
          url: base,
          httpOnly: true,
          sameSite: 'Strict',
        },
      ]);
    }
    return {
      database,
      service,
      base,
      browser,
      page: browser.page,
      session,
      async internal(method, path, body) {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrf } : {}),
            // A PATCH is a JSON merge patch, as the app sends it.
            ...(body === undefined
              ? {}
              : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : {} };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function signUp(base: string, who: SignUp): Promise<Session> {
  const res = await fetch(`${base}/internal/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: PASSWORD, ...who }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { data: { organization: { id: number }; csrf_token: string } };
  return {
    cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!,
    csrf: body.data.csrf_token,
    orgId: body.data.organization.id,
  };
}
