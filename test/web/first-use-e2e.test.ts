import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * What a new operator with only a browser met on first use (the browser-alone audit), each
 * checked where they meet it: a location tree typed in a row, one location after another; a
 * reader's credentials, shown once, announced and copied like an API key; a question asked
 * in place of its button (delete, revoke) taking the focus and giving it back; a one-row
 * spreadsheet imported with a button that says so; the handheld page ready for the first scan;
 * the focus back in the form once a minted key is stored, and on the button that opened a
 * reader's scan-point form once it closes.
 */
describe.skipIf(!hasChromium)('first use from the browser alone', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;

  const parentOf = async (key: string) => {
    const { rows } = await site.database.db.pool.query<{ parent: string | null }>(
      `SELECT p.external_key AS parent FROM locations l LEFT JOIN locations p ON p.id = l.parent_id
        WHERE l.external_key = $1 AND l.deleted_at IS NULL`,
      [key],
    );
    return rows[0]?.parent;
  };

  beforeAll(async () => {
    site = await startWebSite({
      name: 'first-use',
      signUp: { email: 'new@example.test', organization_name: 'Fresh' },
    });
    page = site.page;
  }, 120_000);
  afterAll(() => site?.close());

  it('locations created one after another go beside each other, not each under the last', async () => {
    await page.goto(`${site.base}/locations`);
    await page.getByText('No locations yet').waitFor();
    const panelTitle = () => page.locator('.location-panel h2').textContent();
    // Name, key, Enter: what someone typing in a list of places does, with no other click.
    const type = async (name: string, key: string) => {
      await page.getByLabel('Name', { exact: true }).first().fill(name);
      await page.getByLabel('External key', { exact: true }).fill(key);
      await page.getByLabel('External key', { exact: true }).press('Enter');
      await expect.poll(panelTitle).toBe(name);
    };
    await type('North site', 'NORTH');
    // The new location is selected (its panel open), and still offered as a parent.
    await page.getByRole('radio', { name: 'Under North site' }).waitFor();
    expect(await page.getByRole('radio', { name: 'At the top level' }).isChecked()).toBe(true);
    await type('South site', 'SOUTH');

    await page.locator('.tree-row').getByRole('link', { name: 'North site', exact: true }).click();
    await expect.poll(panelTitle).toBe('North site');
    expect(await page.getByRole('radio', { name: 'Under North site' }).isChecked()).toBe(true);
    await type('Dock 1', 'DOCK-1');
    expect(await page.getByRole('radio', { name: 'Under North site' }).isChecked()).toBe(true);
    await type('Dock 2', 'DOCK-2');
    // One level down is still a click away; this time the button is clicked.
    await page.getByRole('radio', { name: 'Under Dock 2' }).check();
    await page.getByLabel('Name', { exact: true }).first().fill('Dock 2 door');
    await page.getByLabel('External key', { exact: true }).fill('DOCK-2-DOOR');
    await page.getByRole('button', { name: 'Create location' }).click();
    await expect.poll(panelTitle).toBe('Dock 2 door');
    // Ready for the next one: the button, disabled while it ran, had left the focus on nothing.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('new-location-name');

    expect({
      south: await parentOf('SOUTH'),
      dock1: await parentOf('DOCK-1'),
      dock2: await parentOf('DOCK-2'),
      door: await parentOf('DOCK-2-DOOR'),
    }).toEqual({ south: null, dock1: 'NORTH', dock2: 'NORTH', door: 'DOCK-2' });
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it("a reader's credentials, shown once, take the focus and each has a Copy button", async () => {
    await page.goto(`${site.base}/readers`);
    await page.getByLabel('Name', { exact: true }).fill('Dock door');
    await page.getByLabel('Identity').fill('door-1');
    await page.getByLabel('MQTT topic').fill('fresh/door-1/reads');
    await page.getByRole('button', { name: 'Add reader' }).click();
    const panel = page.getByRole('region', { name: 'Credentials for “Dock door”' });
    await panel.waitFor();
    // The panel opens above the readers, away from the button pressed: it must take the
    // focus so a screen reader says what appeared (the focus was left on nothing).
    await expect.poll(() => panel.evaluate((el) => el === document.activeElement)).toBe(true);
    const password = await page.locator('#mqtt-password').inputValue();
    await panel.getByRole('button', { name: 'Copy MQTT password' }).click();
    await panel.getByRole('button', { name: 'Copied MQTT password' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(password);
    await panel.getByRole('button', { name: 'Copy MQTT user name' }).waitFor();
    expect(await seriousAxeViolations(page), 'credentials shown once').toEqual([]);
    await panel.getByRole('button', { name: 'Done' }).click();

    // A new password, asked for on the reader's card, is shown in the same panel.
    await page.getByRole('button', { name: 'New MQTT password for Dock door' }).click();
    await page.getByRole('button', { name: 'Yes, replace' }).click();
    await panel.waitFor();
    await expect.poll(() => panel.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await page.locator('#mqtt-password').inputValue()).not.toBe(password);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('a question asked in place of its button takes the focus, and Cancel gives it back', async () => {
    const created = await site.internal('POST', '/internal/assets', { name: 'Cage 7' });
    expect(created.status).toBe(201);
    await page.goto(`${site.base}/assets/${created.body.data.id}`);
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return 'nothing';
        const group = el.closest('[role="group"]');
        const question = group && document.getElementById(group.getAttribute('aria-labelledby') ?? '');
        return `${el.textContent?.trim()}${question ? ` in "${question.textContent?.trim()}"` : ''}`;
      });
    // By keyboard alone: the button is replaced by the question, which took the focus with it.
    await page.getByRole('button', { name: 'Delete asset' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toMatch(/^Cancel in "Delete “Cage 7”\?/);
    expect(await seriousAxeViolations(page), 'delete question').toEqual([]);
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Delete asset');

    await page.goto(`${site.base}/readers`);
    const revoke = page.getByRole('button', { name: 'Revoke MQTT access of Dock door' });
    await revoke.focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toMatch(/^Cancel in "Revoke the MQTT access of “Dock door”\?/);
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Revoke MQTT access');
    const remove = page.getByRole('button', { name: 'Delete reader Dock door' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Cancel in "Delete “Dock door”?"');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Delete reader');
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('a checked spreadsheet of one new row offers to import 1 row; checked again, nothing', async () => {
    await page.goto(`${site.base}/import`);
    await page.getByLabel('CSV file').setInputFiles({
      name: 'one.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('external_key,name\r\nONE-1,Only crate\r\n'),
    });
    await page.getByRole('button', { name: 'Check file' }).click();
    // It said "Import 1 rows", and "Checked: 1 rows".
    await page.getByText(/^Checked: 1 row —/).waitFor();
    await page.getByRole('button', { name: 'Import 1 row', exact: true }).click();
    await page.getByText(/^Imported: 1 row —/).waitFor();

    // The same file again changes nothing: no button that would import nothing.
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.getByText(/^Checked: 1 row — 0 to create, 0 to change, 1 unchanged/).waitFor();
    await page.getByText('Nothing to import: no row of this file would create or change a record.').waitFor();
    expect(await page.getByRole('button', { name: /^Import \d/ }).count()).toBe(0);
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it("the handheld page opens with the location's field focused: the first scan is not lost", async () => {
    const shelf = await site.internal('POST', '/internal/locations', {
      name: 'Shelf 9',
      external_key: 'SHELF-9',
    });
    expect(shelf.status).toBe(201);
    await page.goto(`${site.base}/locations`);
    await page.getByRole('navigation').getByRole('link', { name: 'Handheld' }).click();
    await page.getByRole('heading', { name: 'Handheld inventory' }).waitFor();
    // A keyboard-wedge scanner types into whatever has the focus, then presses Enter: the
    // location's barcode went into the heading, and nothing happened.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.id ?? ''))
      .toBe((await page.getByLabel("Scan or type the location's barcode").getAttribute('id')) ?? '?');
    await page.keyboard.type('SHELF-9');
    await page.keyboard.press('Enter');
    await page.getByText('Shelf 9 (SHELF-9)').waitFor();
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it('once a minted key is stored, the focus is back in the form that made it', async () => {
    await page.goto(`${site.base}/keys`);
    await page.getByLabel('Name').fill('ERP sync');
    await page.getByRole('button', { name: 'Create key' }).click();
    const panel = page.getByRole('region', { name: 'Key “ERP sync” created' });
    await expect.poll(() => panel.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.textContent))
      .toBe('I have stored the key');
    await page.keyboard.press('Enter');
    // The panel went away with the focus in it, which fell to nothing.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('key-name');
    expect(site.browser.consoleErrors).toEqual([]);
  });

  it("a reader's scan-point form, once saved or cancelled, gives the focus back to its button", async () => {
    const bay = await site.internal('POST', '/internal/locations', { name: 'Bay 4', external_key: 'BAY-4' });
    expect(bay.status).toBe(201);
    if (
      !(await site.internal('GET', '/internal/readers')).body.data.some(
        (r: { name: string }) => r.name === 'Dock door',
      )
    ) {
      const reader = await site.internal('POST', '/internal/readers', {
        name: 'Dock door',
        family: 'generic-json',
        identity: 'door-1',
        topic: 'fresh/door-1/reads',
        webhook: false,
      });
      expect(reader.status).toBe(201);
    }
    await page.goto(`${site.base}/readers`);
    const card = page.getByRole('article', { name: 'Dock door' });
    const open = card.getByRole('button', { name: 'Map an antenna' });
    await open.click();
    const form = card.getByRole('form', { name: 'Map an antenna of Dock door' });
    await form.getByLabel('Antenna').fill('2');
    await form.getByLabel('Search locations').fill('BAY-4');
    const picker = form.getByLabel(/^Location/);
    await expect.poll(() => picker.locator('option').count()).toBeGreaterThan(1);
    await picker.selectOption({ index: 1 });
    await form.getByLabel('Antenna').press('Enter');
    await card.getByText(/^Antenna 2 →/).waitFor();
    const focusedName = () =>
      page.evaluate(
        () => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent,
      );
    // The form went away with the focus in it, which fell to nothing.
    await expect.poll(focusedName).toBe('Map an antenna');

    await card.getByRole('button', { name: 'Edit Antenna 2 of Dock door' }).click();
    await card.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(focusedName).toBe('Edit Antenna 2 of Dock door');
    expect(site.browser.consoleErrors).toEqual([]);
  });
});
