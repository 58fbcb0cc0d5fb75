import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { PASSWORD, startWebSite, type WebSite } from './site.js';

/**
 * A newcomer's first forms. Sign-up showed a refused field only in an alert under the
 * password, in the API's words ("organization_name must not be blank"), with no input
 * marked; and the asset form's check of its metadata rows sent the reader to "the rows
 * marked below" from an alert that sits below them.
 */
describe.skipIf(!hasChromium)("a newcomer's first forms", { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;

  beforeAll(async () => {
    site = await startWebSite({
      name: 'sign-up-fields',
      // The signed-out session probe, and the sign-up refused on purpose below.
      expectedFailures: ['/internal/session', '/internal/auth/sign-up'],
    });
    page = site.page;
  }, 120_000);
  afterAll(() => site?.close());

  it('sign-up shows a refused field under it, marked invalid', async () => {
    await page.goto(`${site.base}/sign-up`);
    const organization = page.getByLabel('Organization name');
    // Blank to the service, not to the browser's `required`.
    await organization.fill('   ');
    await page.getByLabel('Email').fill('noor@example.test');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create organization' }).click();
    const message = page.locator('#sign-up-organization-error');
    await message.waitFor();
    expect(await message.textContent()).toContain('must not be blank');
    expect(await organization.getAttribute('aria-invalid')).toBe('true');
    expect((await organization.getAttribute('aria-describedby'))?.split(' ')).toContain(
      'sign-up-organization-error',
    );
    // The alert points at the field instead of repeating the API's field name.
    const alert = page.getByRole('alert');
    expect(await alert.textContent()).toBe('Check the field marked above.');
    expect(await seriousAxeViolations(page), 'sign-up refused').toEqual([]);

    await organization.fill('Noor Freight');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForURL(`${site.base}/locations`);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it("the asset form's metadata check points up, where the marked rows are", async () => {
    await page.goto(`${site.base}/assets/new`);
    await page.getByLabel('Name').fill('Pallet jack');
    await page.getByRole('button', { name: 'Add a metadata key' }).click();
    await page.getByLabel('Key 1').fill('colour');
    await page.getByLabel('Value 1').fill('red');
    await page.getByRole('button', { name: 'Create asset' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Some metadata rows cannot be read' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('see the rows marked above');
    const row = await page.getByLabel('Value 1').boundingBox();
    const said = await alert.boundingBox();
    expect(row!.y).toBeLessThan(said!.y);
    expect(site.browser.consoleErrors).toEqual([]);
  });
});
