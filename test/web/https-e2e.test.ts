import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../helpers/tls-certs.js';
import { seriousAxeViolations } from './axe.js';
import { type Browser, hasChromium } from './browser.js';
import { PASSWORD, startWebSite, type WebSite } from './site.js';

/**
 * The web app in Chromium over the service's own HTTPS (TAGTRAIL_TLS_CERT): a fresh
 * install signs its first administrator up, the session cookie is Secure, every answer
 * carries Strict-Transport-Security, and the app works as over HTTP (a location created,
 * signed out and back in).
 */
describe.skipIf(!hasChromium)('the web app over HTTPS, in Chromium', { timeout: 60_000 }, () => {
  let site: WebSite;
  let browser: Browser;
  let page: Page;
  let base: string;
  let dir: string;
  const EMAIL = 'tls-admin@example.test';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-web-https-'));
    const certificate = selfSignedCertificate(dir, 'site');
    site = await startWebSite({
      name: 'https',
      // Signed out, the app asks for the session (401) before it shows sign-up or sign-in;
      // the locations tree may still be in flight as the test signs out.
      expectedFailures: ['/internal/session', '/internal/locations/tree'],
      env: { TAGTRAIL_TLS_CERT: certificate.cert, TAGTRAIL_TLS_KEY: certificate.key },
    });
    ({ browser, page, base } = site);
  }, 120_000);
  afterAll(async () => {
    await site?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('signs the first administrator up over HTTPS, with a Secure cookie and HSTS', async () => {
    expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const first = await page.goto(base);
    expect(first?.headers()['strict-transport-security']).toBe('max-age=31536000');
    await page.waitForURL(/\/sign-up$/);
    await page.getByLabel('Organization name').fill('Harbour Yard');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    const signUp = page.waitForResponse((r) => r.url().endsWith('/internal/auth/sign-up'));
    await page.getByRole('button', { name: 'Create organization' }).click();
    const answer = await signUp;
    expect(answer.status()).toBe(201);
    expect(answer.headers()['strict-transport-security']).toBe('max-age=31536000');
    await page.waitForURL(/\/locations$/);
    const cookies = await browser.context.cookies(base);
    expect(cookies.find((c) => c.name === 'tagtrail_session')).toMatchObject({
      secure: true,
      httpOnly: true,
      sameSite: 'Strict',
    });
    await expect.poll(() => page.getByText('No locations yet').isVisible()).toBe(true);
    expect(await seriousAxeViolations(page), 'axe over HTTPS').toEqual([]);
    await browser.screenshot('https-locations');
  });

  it('signs out and back in over HTTPS', async () => {
    const toggle = page.getByRole('button', { name: /Account/ });
    await toggle.click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/locations$/);
    await expect.poll(() => page.getByRole('button', { name: /Account/ }).textContent()).toContain(EMAIL);
  });

  it('made no request outside the service and logged no console error', () => {
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});
