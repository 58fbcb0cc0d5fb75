import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * Accounts in the web app (Debian's Chromium against the whole service): an admin makes a
 * password reset link for a member on the Members page, the link's page sets the new
 * password once; a person changes their own email address. axe on each page.
 */
describe.skipIf(!hasChromium)('accounts in the web app', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;

  const noSeriousAxe = async (what: string) => {
    expect(await seriousAxeViolations(page), what).toEqual([]);
  };
  const post = (path: string, body: unknown) =>
    fetch(`${site.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    site = await startWebSite({
      name: 'accounts',
      signUp: { email: 'ada@example.test', organization_name: 'Depot' },
    });
    page = site.page;
    const invited = await site.internal('POST', '/internal/invitations', {
      email: 'bea@example.test',
      role: 'editor',
    });
    expect(invited.status).toBe(201);
    const accepted = await post('/internal/invitations/accept', {
      token: invited.body.token,
      password: 'first password',
    });
    expect(accepted.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('an admin makes a reset link on the Members page; the link sets a new password once', async () => {
    await page.goto(`${site.base}/members`);
    await page.getByRole('button', { name: 'Password reset link for bea@example.test' }).click();
    const link = await page.getByLabel('Reset link for bea@example.test', { exact: true }).inputValue();
    expect(link).toMatch(new RegExp(`^${site.base}/reset-password#[A-Za-z0-9_-]{43}$`));
    await noSeriousAxe('members page with a reset link');

    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel('New password').fill('second password');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByText('Your password is set.').waitFor();
    await noSeriousAxe('reset page, done');

    const signIn = await post('/internal/auth/sign-in', {
      email: 'bea@example.test',
      password: 'second password',
    });
    expect(signIn.status).toBe(200);
  });

  it('a person changes their email address with their password', async () => {
    await page.goto(`${site.base}/password`);
    await page.getByRole('heading', { name: 'Email address' }).waitFor();
    await page.getByLabel('New email address').fill('ada.lovelace@example.test');
    await page.getByLabel('Current password', { exact: true }).nth(1).fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Change email' }).click();
    await page.getByText('Email changed').waitFor();
    await page.locator('.account-email', { hasText: 'ada.lovelace@example.test' }).waitFor();
    await noSeriousAxe('password page with the email form');
  });
});
