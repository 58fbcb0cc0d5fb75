import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, hasChromium } from './browser.js';
import { handheldSubmissionOnPhone } from './handheld-submission.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The web app end to end, in Debian's Chromium against the whole service (HTTP, database,
 * broker) on a fresh database: sign-up, sign-out and sign-in, an API key minted, used
 * and revoked, a handheld submission on a phone-sized screen moving an asset, and the
 * views showing where it went (readers and scan points: readers.test.ts; the handheld's
 * steps: handheld-submission.ts). Every page is saved as a screenshot under
 * test-results/screenshots/.
 */

if (!hasChromium) {
  console.warn(
    'test/web/e2e: /usr/bin/chromium is missing (apt-get install chromium); browser tests skipped',
  );
}

const EMAIL = 'ada@example.test';
const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'another long passphrase';

describe.skipIf(!hasChromium)('web app in Chromium', { timeout: 60_000 }, () => {
  let site: WebSite;
  let browser: Browser;
  let page: Page;
  let base: string;
  let token = '';

  /** The public API, as an integrator calls it. */
  const apiCall = async (method: string, path: string, body?: unknown, key = token) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, checked field by field below
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
  };

  const go = async (path: string) => {
    await page.goto(`${base}${path}`);
    await page.locator('h1').first().waitFor();
  };

  beforeAll(async () => {
    site = await startWebSite({
      name: 'app',
      // Expected 401s: the signed-out session probe and the wrong password tried on purpose;
      // and the locations page's refresh once its live stream is ready, when that is still
      // in flight as the test signs out a moment after landing there (a slow browser).
      expectedFailures: ['/internal/session', '/internal/auth/sign-in', '/internal/locations/tree'],
    });
    ({ browser, page, base } = site);
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('signs up (a fresh install opens on sign-up): creates the user and the organization and lands signed in', async () => {
    // A fresh install has nobody to sign in as: it opens on sign-up for the first administrator,
    // who still lands on the page they opened (sign-up dropped it and went to /locations).
    await page.goto(`${base}/keys`);
    await page.waitForURL(/\/sign-up\?next=%2Fkeys$/);
    await expect.poll(() => page.title()).toBe('Create your organization · tagtrail');
    await page.getByLabel('Organization name').fill('Acme Logistics');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await browser.screenshot('sign-up');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForURL(/\/keys$/);
    await expect.poll(() => page.getByRole('button', { name: /Account/ }).textContent()).toContain(EMAIL);
    await page.goto(`${base}/locations`);
    await expect.poll(() => page.getByText('No locations yet').isVisible()).toBe(true);
  });

  it('signs out from the account menu, then signs back in', async () => {
    const toggle = page.getByRole('button', { name: /Account/ });
    await toggle.click();
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => page.getByText('Acme Logistics').isVisible()).toBe(true);
    await browser.screenshot('account-menu');
    // Escape closes it and gives focus back to the toggle.
    await page.keyboard.press('Escape');
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);

    // A page that needs a session sends the visitor to sign-in and back after.
    await page.goto(`${base}/readers`);
    await page.waitForURL(/\/sign-in\?next=%2Freaders$/);
    // Sign-up is closed now that the first user exists (TAGTRAIL_SIGNUP=first-user-only).
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expect.poll(() => page.getByRole('link', { name: 'Create an organization' }).count()).toBe(0);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect((await alert.textContent())?.length).toBeGreaterThan(0);
    await browser.screenshot('sign-in-error');
    await page.getByLabel('Password').fill(PASSWORD);
    await browser.screenshot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/readers$/);
    await page.getByRole('heading', { name: 'Readers and scan points' }).waitFor();
  });

  it('mints an API key: scopes per resource, the key shown once with a copy button', async () => {
    await page.getByRole('button', { name: /Account/ }).click();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(/\/keys$/);
    // The URL changes before the page renders: wait for the form before counting in it.
    await page.getByRole('button', { name: 'Create key' }).waitFor();

    // Assets and locations: none / read / read and write; tracking: none / read; no key admin.
    for (const [group, options] of [
      ['Assets', ['None', 'Read', 'Read and write']],
      ['Locations', ['None', 'Read', 'Read and write']],
      ['Tracking (history and report)', ['None', 'Read']],
    ] as const) {
      const radios = page.getByRole('group', { name: group, exact: true }).getByRole('radio');
      expect(await radios.count(), group).toBe(options.length);
      for (const option of options) {
        await page
          .getByRole('group', { name: group, exact: true })
          .getByLabel(option, { exact: true })
          .waitFor();
      }
    }
    expect(await page.getByText(/keys:admin/).count()).toBe(0);
    const expiry = page.getByLabel('Expires');
    expect(await expiry.locator('option').allTextContents()).toEqual([
      'Never',
      'In 30 days',
      'In 90 days',
      'In 1 year',
      'On a date…',
    ]);
    await expiry.selectOption('date');
    await page.getByLabel('Expiry date').waitFor();
    await expiry.selectOption('30');
    await expect.poll(() => page.getByLabel('Expiry date').count()).toBe(0);

    await page.getByLabel('Name', { exact: true }).fill('integration');
    await page.getByRole('group', { name: 'Assets' }).getByLabel('Read and write').check();
    await page.getByRole('group', { name: 'Locations' }).getByLabel('Read and write').check();
    await page.getByRole('group', { name: 'Tracking (history and report)' }).getByLabel('Read').check();
    await page.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByLabel('API key', { exact: true });
    await shown.waitFor();
    token = await shown.inputValue();
    expect(token.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
    await browser.screenshot('keys-minted');

    const me = await apiCall('GET', '/api/v1/orgs/me');
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.data.name).toBe('Acme Logistics');
    expect([...me.body.data.scopes].sort()).toEqual([
      'assets:read',
      'assets:write',
      'locations:read',
      'locations:write',
      'tracking:read',
    ]);

    // Dismissed, the key is gone from the page for good; the list shows it active.
    await page.getByRole('button', { name: 'I have stored the key' }).click();
    await expect.poll(() => page.getByLabel('API key', { exact: true }).count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    const row = page.getByRole('row', { name: /integration/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('active');
    expect(await row.textContent()).toContain('assets:write');
  });

  it('writes master data through the public API with the key just minted', async () => {
    const warehouse = await apiCall('POST', '/api/v1/locations', {
      name: 'Main warehouse',
      external_key: 'WH-1',
    });
    expect(warehouse.status, JSON.stringify(warehouse.body)).toBeLessThan(300);
    for (const [name, key] of [
      ['Dock 1', 'DOCK-1'],
      ['Shelf A', 'SHELF-A'],
    ]) {
      const res = await apiCall('POST', '/api/v1/locations', {
        name,
        external_key: key,
        parent_id: warehouse.body.data.id,
      });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      if (key === 'SHELF-A') {
        // A barcode label on the shelf, for the handheld to scan.
        const tag = await apiCall('POST', `/api/v1/locations/${res.body.data.id}/tags`, {
          tag_type: 'barcode',
          value: 'LBL-SHELF-A',
        });
        expect(tag.status, JSON.stringify(tag.body)).toBe(201);
      }
    }
    const asset = await apiCall('POST', '/api/v1/assets', {
      name: 'Pallet jack',
      external_key: 'PJ-1',
      tags: [{ tag_type: 'barcode', value: 'TAG-0001' }],
    });
    expect(asset.status, JSON.stringify(asset.body)).toBeLessThan(300);
  });

  it('a handheld submission on a phone-sized screen moves the asset', async () => {
    await handheldSubmissionOnPhone(browser, base);
  });

  it('the views show where the asset is now and where it has been', async () => {
    await go('/assets');
    await page.getByLabel('Search assets').fill('pallet');
    await page.waitForURL(/\/assets\?q=pallet$/);
    const row = page.getByRole('row', { name: /PJ-1/ });
    await expect.poll(() => row.textContent()).toContain('Shelf A (SHELF-A)');
    expect(await page.locator('.pager-status').textContent()).toBe('1–1 of 1');
    await browser.screenshot('assets');

    await row.getByRole('link', { name: 'PJ-1' }).click();
    await page.waitForURL(/\/assets\/\d+$/);
    const timeline = page.getByRole('list', { name: 'Where the asset has been' });
    await expect.poll(() => timeline.getByRole('listitem').count()).toBe(1);
    expect(await timeline.textContent()).toContain('SHELF-A');
    await browser.screenshot('asset-history');

    // The tree, by keyboard: Tab to the warehouse, Enter to expand it.
    await go('/locations');
    const warehouse = page.getByRole('button', { name: /Main warehouse/ });
    await warehouse.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => warehouse.getAttribute('aria-expanded')).toBe('true');
    const shelf = page.locator('.tree-row', { hasText: 'Shelf A' });
    await expect.poll(() => shelf.textContent()).toContain('1 asset');
    expect(await page.locator('.tree-row', { hasText: 'Dock 1' }).textContent()).toContain('0 assets');
    await browser.screenshot('locations');

    await go('/report');
    const reportRow = page.getByRole('row', { name: /PJ-1/ });
    await expect.poll(() => reportRow.textContent()).toContain('SHELF-A');
    await browser.screenshot('report');
  });

  it('revokes the key in the UI; the next API request is refused', async () => {
    await go('/keys');
    await page.getByRole('button', { name: 'Revoke integration' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    const row = page.getByRole('row', { name: /integration/ });
    await expect.poll(() => row.textContent()).toContain('revoked');
    await browser.screenshot('keys');
    const me = await apiCall('GET', '/api/v1/orgs/me');
    expect(me.status).toBe(401);
    expect(me.body.error.detail).toBe('API key has been revoked');
  });

  it('changes the password', async () => {
    await go('/password');
    // The page also holds the email form, with a current-password field of its own.
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill(PASSWORD);
    await form.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel('New password again').fill(NEW_PASSWORD);
    await form.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed.').waitFor();
    await browser.screenshot('password');
    const res = await fetch(`${base}/internal/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, password: NEW_PASSWORD }),
    });
    expect(res.status).toBe(200);
  });

  it('offers a reload once the service serves another build of the web app (an upgrade)', async () => {
    const notice = page.getByRole('status').filter({ hasText: 'tagtrail was updated' });
    await go('/locations');
    // Every /internal/ answer names the service's build: the page's own, so far.
    const own = await page.evaluate(() =>
      fetch('/internal/session').then((r) => r.headers.get('x-tagtrail-web-build')),
    );
    expect(own).toMatch(/^[0-9a-f]{12}$/);
    expect(await page.locator(`script[src^="/assets/${own}/"]`).count()).toBe(1);
    await page.getByRole('link', { name: 'Assets', exact: true }).click();
    await page.getByRole('heading', { name: 'Assets', level: 1 }).waitFor();
    expect(await notice.count()).toBe(0);

    // The service was upgraded meanwhile: its answers name a build this page does not run.
    // (Not the live stream's: an EventSource shows no headers, and its body never ends.)
    const answers = (url: URL) => url.pathname.startsWith('/internal/') && url.pathname !== '/internal/live';
    let routing = true;
    await page.route(answers, async (route) => {
      try {
        const response = await route.fetch();
        await route.fulfill({
          response,
          headers: { ...response.headers(), 'x-tagtrail-web-build': 'fedcba987654' },
        });
      } catch (err) {
        // A request still in this handler when the route is removed and the page reloads
        // is answered already ("Route is already handled") or gone with the page.
        if (routing) throw err;
      }
    });
    await page.getByRole('link', { name: 'Locations', exact: true }).click();
    await notice.waitFor();
    await browser.screenshot('newer-build');
    routing = false;
    await page.unroute(answers);
    await notice.getByRole('button', { name: 'Reload' }).click();
    await page.waitForLoadState('load');
    await page.locator('h1').first().waitFor();
    expect(await notice.count()).toBe(0);
  });

  it('made no request outside the service and logged no console error', () => {
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});
