import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { PASSWORD, startWebSite, type WebSite } from './site.js';

/**
 * What a browser-alone audit found, checked where a person meets it: at phone width the
 * buttons beside a field (Copy beside a secret, Set and Add on the handheld page) broke their
 * one word in two ("Co / py"); and a keyboard user who pressed Enter on a button that is
 * disabled while its request runs ("Change password", "Check file") lost the focus to the
 * page body, to find their place again from the top.
 */

/** The words of the button's text that the browser laid out over more than one line. */
const brokenWords = (page: Page, name: string) =>
  page.getByRole('button', { name, exact: true }).evaluate((button) => {
    const broken: string[] = [];
    const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (const word of text.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = Array.from(range.getClientRects()).filter((r) => r.width > 0).length;
        if (lines > 1 && !(node.parentElement?.closest('.visually-hidden') ?? null)) broken.push(word[0]);
      }
    }
    return broken;
  });

const focused = (page: Page) =>
  page.evaluate(() => {
    const e = document.activeElement;
    return e === null || e === document.body
      ? 'body'
      : `${e.tagName.toLowerCase()}: ${e.textContent?.trim()}`;
  });

describe.skipIf(!hasChromium)(
  'buttons at phone width and focus after a request',
  { timeout: 120_000 },
  () => {
    let site: WebSite;
    let page: Page;

    beforeAll(async () => {
      site = await startWebSite({
        name: 'focus-buttons',
        signUp: { email: 'kim@example.test', organization_name: 'Depot' },
      });
      page = site.page;
    }, 120_000);
    afterAll(() => site?.close());

    it('at 390px the Copy, Set and Add buttons keep their word whole', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${site.base}/keys`);
      await page.getByLabel('Name', { exact: true }).fill('ERP');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('heading', { name: 'Key “ERP” created' }).waitFor();
      const broken = await brokenWords(page, 'Copy API key');

      await page.goto(`${site.base}/handheld`);
      await page.getByRole('heading', { name: 'Handheld inventory' }).waitFor();
      broken.push(...(await brokenWords(page, 'Set')), ...(await brokenWords(page, 'Add')));
      expect(broken).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 800 });
    });

    it('a file checked from the keyboard leaves the focus on its outcome', async () => {
      await page.goto(`${site.base}/import`);
      await page.getByLabel('CSV file').setInputFiles({
        name: 'a.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from('external_key,name\nA-1,Chair\n'),
      });
      await page.getByRole('button', { name: 'Check file' }).press('Enter');
      await page.getByRole('status').filter({ hasText: 'Checked' }).waitFor();
      await expect.poll(() => focused(page)).toMatch(/^p: Checked: 1 row/);

      await page.getByRole('button', { name: 'Import 1 row' }).press('Enter');
      await page.getByRole('status').filter({ hasText: 'Imported' }).waitFor();
      await expect.poll(() => focused(page)).toMatch(/^p: Imported: 1 row/);
    });

    it("an asset's and a reader's edit forms take the focus in and give it back", async () => {
      const asset = await site.internal('POST', '/internal/assets', {
        name: 'Forklift',
        external_key: 'FL-1',
      });
      expect(asset.status, JSON.stringify(asset.body)).toBe(201);
      await page.goto(`${site.base}/assets/${asset.body.data.id}`);
      await page.getByRole('button', { name: 'Edit details' }).press('Enter');
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.id))
        .toBe(`asset-${asset.body.data.id}-name`);
      await page.getByLabel('Description').fill('Yellow');
      await page.getByRole('button', { name: 'Save changes' }).press('Enter');
      await page.getByRole('button', { name: 'Edit details' }).waitFor();
      await expect.poll(() => focused(page)).toBe('button: Edit details');

      const reader = await site.internal('POST', '/internal/readers', {
        name: 'Dock',
        family: 'generic-json',
        identity: 'dock-1',
        topic: 'site/dock-1/reads',
        webhook: false,
      });
      expect(reader.status, JSON.stringify(reader.body)).toBe(201);
      await page.goto(`${site.base}/readers`);
      await page.getByRole('button', { name: 'Edit reader Dock' }).press('Enter');
      await page.getByRole('form', { name: 'Edit reader Dock' }).getByLabel('Identity').fill('dock-2');
      await page.getByRole('button', { name: 'Save reader' }).press('Enter');
      await page.getByText('dock-2', { exact: true }).waitFor();
      await expect.poll(() => focused(page)).toBe('button: Edit');
    });

    it('an edit form opened before the page ran its effects still takes the focus', async () => {
      // CI pressed Edit details in the frame the page drew it, before the page's effects ran:
      // the form opened with the focus on the page body. A click from the DOM mutation's own
      // microtask reproduces that moment every time.
      const asset = await site.internal('POST', '/internal/assets', {
        name: 'Pallet jack',
        external_key: 'PJ-1',
      });
      expect(asset.status, JSON.stringify(asset.body)).toBe(201);
      const early = await page.context().newPage();
      try {
        await early.addInitScript(() => {
          const observer = new MutationObserver(() => {
            const button = Array.from(document.querySelectorAll('button')).find(
              (b) => b.textContent?.trim() === 'Edit details',
            );
            if (!button) return;
            observer.disconnect();
            button.focus();
            button.click();
          });
          observer.observe(document, { childList: true, subtree: true });
        });
        await early.goto(`${site.base}/assets/${asset.body.data.id}`);
        await early.getByRole('heading', { name: 'Edit details' }).waitFor();
        await expect
          .poll(() => early.evaluate(() => document.activeElement?.id))
          .toBe(`asset-${asset.body.data.id}-name`);
      } finally {
        await early.close();
      }
    });

    it('a location moved and renamed says so, and the focus stays in the card', async () => {
      const top = await site.internal('POST', '/internal/locations', {
        name: 'Warehouse',
        external_key: 'WH',
      });
      expect(top.status, JSON.stringify(top.body)).toBe(201);
      const office = await site.internal('POST', '/internal/locations', {
        name: 'Office',
        external_key: 'OFF',
        parent_id: top.body.data.id,
      });
      expect(office.status, JSON.stringify(office.body)).toBe(201);
      const id = office.body.data.id;
      await page.goto(`${site.base}/locations?selected=${id}`);
      await page.getByRole('button', { name: 'Move to the top level' }).press('Enter');
      await page.getByRole('status').filter({ hasText: 'Moved to the top level.' }).waitFor();
      await expect.poll(() => focused(page)).toBe('p: Moved to the top level.');

      await page.getByLabel('New external key').fill('OFFICE');
      await page.getByRole('button', { name: 'Rename…' }).press('Enter');
      await expect.poll(() => focused(page)).toBe('button: Cancel');
      await page.getByRole('button', { name: 'Confirm rename' }).press('Enter');
      // Once the reloaded location shows its new key, the form's own message is still there:
      // the form was remounted for the new key, which threw the message (and the focus) away.
      await page.locator('.facts dd', { hasText: /^OFFICE$/ }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Key changed to OFFICE' }).waitFor({ timeout: 2000 });
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe(`rename-${id}-key`);
    });

    it('a password changed from the keyboard leaves the focus on its button', async () => {
      await page.goto(`${site.base}/password`);
      await page.getByLabel('Current password').first().fill(PASSWORD);
      await page.getByLabel('New password', { exact: true }).fill('a different long passphrase');
      await page.getByLabel('New password again').fill('a different long passphrase');
      await page.getByRole('button', { name: 'Change password' }).first().press('Enter');
      await page.getByText('Password changed.').waitFor();
      await expect.poll(() => focused(page)).toBe('button: Change password');
    });
  },
);
