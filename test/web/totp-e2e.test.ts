import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeAt } from '../helpers/totp-codes.js';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { PASSWORD, startWebSite, type WebSite } from './site.js';

/** The recovery codes the page shows once, as listed. */
async function shownRecoveryCodes(page: Page): Promise<string[]> {
  const list = page.getByRole('list', { name: 'Recovery codes' });
  await list.waitFor();
  return (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
}

/**
 * Signs the browser out by dropping its cookies, from a blank page: a signed-in page left
 * open keeps asking (its list, the live stream), and each request after the cookies went
 * would be a 401 in the console, which the tests hold to be empty.
 */
/** The id of the element with the focus, once something has it (not the page body). */
const focusedId = (page: Page) =>
  page.evaluate(() => (document.activeElement === document.body ? null : (document.activeElement?.id ?? '')));

async function forgetSession(page: Page): Promise<void> {
  await page.goto('about:blank');
  await page.context().clearCookies();
}

/**
 * Two-factor sign-in in the web app (Debian's Chromium against the whole service): a person
 * turns it on from the Change password page (QR code, then recovery codes shown once), then
 * signing in asks for the code or a recovery code; an admin resets a member's.
 */
describe.skipIf(!hasChromium)('two-factor sign-in in the web app', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;
  let adaCodes: string[] = [];

  beforeAll(async () => {
    site = await startWebSite({
      name: 'totp',
      // The session probe once signed out, and the password-only sign-in the code is asked after.
      expectedFailures: ['/internal/session', '/internal/auth/sign-in'],
      signUp: { email: 'ada@example.test', organization_name: 'Depot' },
    });
    page = site.page;
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('each step of the two-factor card puts the focus on what replaced the button pressed', async () => {
    // Each button pressed here is replaced by the step's outcome, and the focus fell to the
    // page body: a keyboard user started over from the top, a screen reader said nothing.
    await page.goto(`${site.base}/password`);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await expect.poll(() => focusedId(page)).toBe('totp-enrol-intro');
    const secret = await page.getByLabel('Secret').inputValue();
    await page.getByLabel('Code from the app').fill(await codeAt(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await shownRecoveryCodes(page);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await expect.poll(() => focusedId(page)).toBe('totp-state');
    expect(await page.locator('#totp-state').textContent()).toContain('On: signing in needs a code');
    await page.getByLabel('Current password').last().fill(PASSWORD);
    await page.getByLabel('Code from the app').fill(await codeAt(secret, 1));
    await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).waitFor();
    await expect.poll(() => focusedId(page)).toBe('totp-state');
    expect(await page.locator('#totp-state').textContent()).toContain('Off: your password alone');
    expect(await seriousAxeViolations(page), 'turned off').toEqual([]);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('enrols with a code from the app, then sign-in needs a code', async () => {
    await page.goto(`${site.base}/password`);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^[A-Z2-7]+$/);
    expect(await page.getByLabel('Link (otpauth)').inputValue()).toContain(`secret=${secret}`);
    // The QR code is an SVG data URL the page's CSP lets load.
    const qr = page.getByRole('img', { name: /QR code of the otpauth link/ });
    await qr.waitFor();
    // No DOM types here: the image element's two properties, as the page sees them. The
    // image decodes after the element is in the page: polled, not read once.
    const loaded = () =>
      qr.evaluate((img) => {
        const { complete, naturalWidth } = img as unknown as { complete: boolean; naturalWidth: number };
        return complete && naturalWidth > 0;
      });
    await expect.poll(loaded).toBe(true);
    expect(await seriousAxeViolations(page), 'enrolment').toEqual([]);
    await page.getByLabel('Code from the app').fill(await codeAt(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    adaCodes = await shownRecoveryCodes(page);
    expect(adaCodes).toHaveLength(10);
    for (const code of adaCodes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    expect(await seriousAxeViolations(page), 'recovery codes').toEqual([]);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('On: signing in needs a code').waitFor();
    await page.locator('#recovery-left').getByText('10', { exact: true }).waitFor();

    await forgetSession(page);
    await page.goto(`${site.base}/sign-in`);
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const codeField = page.getByLabel('Code from your authenticator app');
    await codeField.waitFor();
    // Asking for the code is the next step, not an error: no alert with the API's field name,
    // a hint that says why, and the focus in the field (it stayed behind on the button).
    await expect.poll(() => codeField.evaluate((input) => input === document.activeElement)).toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toContain('totp_code');
    expect(await codeField.getAttribute('aria-describedby')).toBe('sign-in-code-hint');
    expect(await seriousAxeViolations(page), 'sign-in asking for the code').toEqual([]);
    await codeField.fill(await codeAt(secret, 1));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${site.base}/locations`);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('an organization requiring it sends a member without it to enrol before anything else', async () => {
    const invited = await site.internal('POST', '/internal/invitations', {
      email: 'bea@example.test',
      role: 'editor',
    });
    expect(invited.status).toBe(201);
    const accepted = await fetch(`${site.base}/internal/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: invited.body.token, password: PASSWORD }),
    });
    expect(accepted.status).toBe(201);

    // Ada (enrolled above, signed in again in the browser) requires it on the Members page.
    await page.goto(`${site.base}/members`);
    const box = page.getByLabel(/Require it of every member/);
    // Listening before the click: the answer may come before `check()` returns.
    const saved = page.waitForResponse(
      (r) => r.url().endsWith('/internal/members/two-factor') && r.request().method() === 'POST',
    );
    await box.check();
    expect((await saved).status()).toBe(200);
    expect(await box.isChecked()).toBe(true);

    await forgetSession(page);
    await page.goto(`${site.base}/sign-in`);
    await page.getByLabel('Email').fill('bea@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${site.base}/password`);
    await page.getByText('Depot requires two-factor sign-in').waitFor();
    await page.goto(`${site.base}/assets`);
    await page.waitForURL(`${site.base}/password`);

    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    await page.getByLabel('Code from the app').fill(await codeAt(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const first = await shownRecoveryCodes(page);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('Your organization requires it, so it cannot be turned off.').waitFor();

    // New recovery codes for a current code; the page shows them once, then the count.
    await page.getByLabel('App code for new recovery codes').fill(await codeAt(secret, 1));
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    const fresh = await shownRecoveryCodes(page);
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => first.includes(c))).toBe(false);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.locator('#recovery-left').getByText('10', { exact: true }).waitFor();
    await page.goto(`${site.base}/assets`);
    await page.getByRole('heading', { name: 'Assets' }).waitFor();
    expect(page.url()).toBe(`${site.base}/assets`);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('a recovery code signs in in place of the app code; an admin resets a member, and the log shows it', async () => {
    await forgetSession(page);
    await page.goto(`${site.base}/sign-in`);
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Code from your authenticator app').waitFor();
    await page.getByRole('button', { name: 'Lost your phone? Use a recovery code' }).click();
    const recovery = page.getByLabel('Recovery code');
    await expect.poll(() => recovery.evaluate((input) => input === document.activeElement)).toBe(true);
    await recovery.fill(adaCodes[0]!.toUpperCase());
    expect(await seriousAxeViolations(page), 'sign-in with a recovery code').toEqual([]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in with a recovery code: on to the card that counts what is left.
    await page.waitForURL(`${site.base}/password`);
    await page.locator('#recovery-left').getByText('9', { exact: true }).waitFor();

    // Bea lost her phone and her codes: Ada resets hers from the Members page.
    await page.goto(`${site.base}/members`);
    // The People table says who has it on (both, here).
    const beaRow = page.getByRole('row', { name: /bea@example\.test/ });
    await beaRow.getByRole('cell', { name: 'on', exact: true }).waitFor();
    const reset = page.getByRole('button', { name: 'Reset two-factor sign-in of bea@example.test' });
    await reset.click();
    await page.getByText('Reset two-factor sign-in of bea@example.test?').waitFor();
    expect(await seriousAxeViolations(page), 'reset confirmation').toEqual([]);
    // The reset's answer, awaited from before the click: the Reset button is gone as soon as
    // the confirmation shows, and leaving the page before the answer would abort the call.
    const resetDone = page.waitForResponse(
      (r) => /\/internal\/members\/\d+\/two-factor$/.test(r.url()) && r.request().method() === 'DELETE',
    );
    await page.getByRole('button', { name: 'Yes, reset' }).click();
    expect((await resetDone).status()).toBeLessThan(300);
    // The confirmation closes on success only (a refusal would stay there with its alert).
    await page.getByText('Reset two-factor sign-in of bea@example.test?').waitFor({ state: 'detached' });
    await beaRow.getByRole('cell', { name: 'off', exact: true }).waitFor();
    // Ada's own row never offers it.
    expect(await page.getByRole('button', { name: /Reset two-factor sign-in of ada/ }).count()).toBe(0);

    await page.goto(`${site.base}/activity?entity_type=two_factor`);
    await page.getByText(/Two-factor sign-in of member #\d+ reset by ada@example\.test/).waitFor();
    await page
      .getByText(/turned on by bea@example\.test/)
      .first()
      .waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    for (const code of adaCodes) expect(text).not.toContain(code);
    expect(await seriousAxeViolations(page), 'activity of two-factor sign-in').toEqual([]);
    expect(site.browser.consoleErrors).toEqual([]);
  });
});
