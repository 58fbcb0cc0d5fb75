import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { PASSWORD, startWebSite, type WebSite } from './site.js';

/**
 * A session that ends mid-form (deleted server-side here, as an expiry or a sign-out
 * elsewhere would) sends the person to sign-in; signed in again, they are back at the form
 * with what they typed still in it.
 */
describe.skipIf(!hasChromium)('typed input kept across a sign-in', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;
  const EMAIL = 'kept@example.test';

  beforeAll(async () => {
    site = await startWebSite({
      name: 'kept-input',
      expectedFailures: ['/internal/webhooks', '/internal/locations'],
      signUp: { email: EMAIL, organization_name: 'Kept' },
    });
    page = site.page;
  }, 120_000);
  afterAll(() => site?.close());

  /**
   * Opens a page and waits for its reads, so none of them is the request that meets the
   * ended session: the form's submit must be.
   */
  const open = async (path: string, reads: string[]) => {
    const answered = reads.map((read) => page.waitForResponse((r) => r.url().includes(read)));
    await page.goto(`${site.base}${path}`);
    await Promise.all(answered);
  };

  it('the webhook form keeps its URL and events when the session ends before Add', async () => {
    await open('/webhooks', ['/internal/webhooks', '/internal/locations?']);
    await page.getByLabel('URL').fill('https://erp.example.test/kept');
    await site.database.db.pool.query('DELETE FROM web_sessions');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForURL(/\/sign-in\?next=%2Fwebhooks$/);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/webhooks$/);
    await expect.poll(() => page.getByLabel('URL').inputValue()).toBe('https://erp.example.test/kept');
    expect(await seriousAxeViolations(page), 'axe on the kept form').toEqual([]);

    // Once added, the form starts empty again (nothing kept after the save).
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    await expect.poll(() => page.getByLabel('URL').inputValue()).toBe('');
    await page.reload();
    await expect.poll(() => page.getByLabel('URL').inputValue()).toBe('');
  });

  it('the location create form keeps name, key and description when the session ends before Create', async () => {
    await open('/locations', ['/internal/locations/tree']);
    await page.getByLabel('Name', { exact: true }).first().fill('Kept hall');
    await page.getByLabel('External key', { exact: true }).fill('KEPT-HALL');
    await site.database.db.pool.query('DELETE FROM web_sessions');
    await page.getByRole('button', { name: 'Create location' }).click();
    await page.waitForURL(/\/sign-in\?next=%2Flocations/);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/locations/);
    await expect.poll(() => page.getByLabel('Name', { exact: true }).first().inputValue()).toBe('Kept hall');
    expect(await page.getByLabel('External key', { exact: true }).inputValue()).toBe('KEPT-HALL');
    expect(await seriousAxeViolations(page), 'axe on the kept location form').toEqual([]);
  });

  it('the reader form keeps name and identity when the session ends before Add', async () => {
    await open('/readers', ['/internal/readers']);
    await page.locator('#reader-name').fill('Kept reader');
    await page.locator('#reader-identity').fill('kept-r700');
    await site.database.db.pool.query('DELETE FROM web_sessions');
    await page.locator('#reader-name').press('Enter');
    await page.waitForURL(/\/sign-in\?next=%2Freaders/);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/readers/);
    await expect.poll(() => page.locator('#reader-name').inputValue()).toBe('Kept reader');
    expect(await page.locator('#reader-identity').inputValue()).toBe('kept-r700');
  });

  it('a sign-out forgets kept input: the next person at the tab does not see it', async () => {
    await open('/readers', ['/internal/readers']);
    await page.locator('#reader-name').fill('Left behind');
    const toggle = page.getByRole('button', { name: /Account/ });
    await toggle.click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname !== '/sign-in');
    await open('/readers', ['/internal/readers']);
    expect(await page.locator('#reader-name').inputValue()).toBe('');
    expect(
      await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('tagtrail.form.'))),
    ).toEqual([]);
  });
});
