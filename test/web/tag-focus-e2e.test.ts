import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * Keyboard only: a tag's Attach stays disabled until the reload shows the tag, a tag's
 * Detach goes away with it, and an asset's Rename remounted its card; each dropped the
 * focus to the page body, so a keyboard user attaching tags one after another, or renaming
 * a key, started again from the top of the page. So did removing a reader's scan point,
 * whose row went with the focus on its "Yes, remove", and revoking an API key, whose Revoke
 * goes once the list shows it revoked.
 */

/** The id of the element with the focus, or null while only the page body has it. */
const focusedId = (page: Page) =>
  page.evaluate(() => (document.activeElement === document.body ? null : (document.activeElement?.id ?? '')));

/** Presses Enter on `name`'s button, as a keyboard user does. */
async function pressButton(page: Page, name: string | RegExp) {
  await page.getByRole('button', { name }).focus();
  await page.keyboard.press('Enter');
}

/**
 * Answers a question asked in place of its button with `yes`, once the question has taken
 * the focus (its Cancel, in an effect after it renders): focused before that, the Enter
 * would land on Cancel.
 */
async function answerYes(page: Page, yes: string) {
  await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
  await pressButton(page, yes);
}

describe.skipIf(!hasChromium)('the focus after tag and key changes', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;
  let assetId = 0;
  let locationId = 0;

  beforeAll(async () => {
    site = await startWebSite({
      name: 'tag-focus',
      // The refused duplicate attach below.
      expectedFailures: ['/tags'],
      signUp: { email: 'kim@example.test', organization_name: 'Depot' },
    });
    page = site.page;
    const asset = await site.internal('POST', '/internal/assets', {
      name: 'Forklift',
      external_key: 'FORK-1',
    });
    expect(asset.status, JSON.stringify(asset.body)).toBe(201);
    assetId = asset.body.data.id;
    const location = await site.internal('POST', '/internal/locations', {
      name: 'Dock',
      external_key: 'DOCK',
    });
    expect(location.status, JSON.stringify(location.body)).toBe(201);
    locationId = location.body.data.id;
  }, 120_000);
  afterAll(() => site?.close());

  it("on an asset's page: attached, the value field; detached, the Tags heading; renamed, the key field", async () => {
    await page.goto(`${site.base}/assets/${assetId}`);
    const value = page.getByLabel('New tag value');
    await value.fill('TAG-0001');
    await pressButton(page, 'Attach tag');
    await page.getByText('TAG-0001', { exact: true }).waitFor();
    await expect.poll(() => focusedId(page)).toBe('attach-tag-value');

    // Refused (the tag is this asset's already): the focus goes back to the button.
    await value.fill('TAG-0001');
    await pressButton(page, 'Attach tag');
    await page.getByText(/already/).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Attach tag');

    await pressButton(page, /^Detach RFID TAG-0001/);
    await page.getByText('No tags attached.').waitFor();
    await expect.poll(() => focusedId(page)).toBe('tags-title');

    await page.locator('#rename-key').fill('FORK-2');
    await pressButton(page, 'Rename');
    await page.getByRole('status').getByText('Key changed to FORK-2.').waitFor();
    await page.getByRole('heading', { level: 1 }).locator('..').getByText('FORK-2').first().waitFor();
    await expect.poll(() => focusedId(page)).toBe('rename-key');
    expect(await page.locator('#rename-key').inputValue()).toBe('FORK-2');
    expect(await seriousAxeViolations(page), 'asset page after the changes').toEqual([]);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it("a reader's scan point removed: the reader's Scan points heading", async () => {
    const reader = await site.internal('POST', '/internal/readers', {
      name: 'Gate',
      family: 'generic-json',
      identity: 'gate-1',
      topic: 'depot/gate-1',
      webhook: false,
    });
    expect(reader.status, JSON.stringify(reader.body)).toBe(201);
    const readerId = reader.body.data.id;
    const point = await site.internal('POST', `/internal/readers/${readerId}/scan-points`, {
      antenna: 1,
      location_id: locationId,
    });
    expect(point.status, JSON.stringify(point.body)).toBe(201);

    await page.goto(`${site.base}/readers`);
    await pressButton(page, 'Remove Antenna 1 of Gate');
    await answerYes(page, 'Yes, remove');
    await page.getByText('No antenna mapped yet').waitFor();
    await expect.poll(() => focusedId(page)).toBe(`reader-${readerId}-scan-points`);
    expect(await seriousAxeViolations(page), 'readers after a removal').toEqual([]);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('an API key revoked: its status in its row', async () => {
    const key = await site.internal('POST', '/internal/keys', {
      name: 'ERP sync',
      scopes: [],
      expires_at: null,
    });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const keyId = key.body.data.id;
    await page.goto(`${site.base}/keys`);
    await pressButton(page, 'Revoke ERP sync');
    await answerYes(page, 'Yes, revoke');
    const status = page.locator(`#key-${keyId}-status`);
    await status.getByText('revoked').waitFor();
    await expect.poll(() => focusedId(page)).toBe(`key-${keyId}-status`);
    expect(await seriousAxeViolations(page), 'keys after a revocation').toEqual([]);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it("on a location's panel: attached, the value field; detached, the Tags heading", async () => {
    await page.goto(`${site.base}/locations?selected=${locationId}`);
    const value = page.locator(`#tags-${locationId}-value`);
    await value.fill('DOCK-TAG');
    await pressButton(page, 'Attach tag');
    await page.getByRole('button', { name: /^Detach RFID tag DOCK-TAG/ }).waitFor();
    await expect.poll(() => focusedId(page)).toBe(`tags-${locationId}-value`);

    await pressButton(page, /^Detach RFID tag DOCK-TAG/);
    await page.getByText(/No tags: readers and handhelds/).waitFor();
    await expect.poll(() => focusedId(page)).toBe(`tags-${locationId}-title`);
    expect(await seriousAxeViolations(page), 'location panel after the changes').toEqual([]);
    expect(site.browser.consoleErrors).toEqual([]);
  });
});
