import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * What a new operator with only a browser met on first use (the browser-alone audit), each
 * checked where they meet it: a location tree typed in a row, one location after another.
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
    // One level down is still a click away.
    await page.getByRole('radio', { name: 'Under Dock 2' }).check();
    await type('Dock 2 door', 'DOCK-2-DOOR');

    expect({
      south: await parentOf('SOUTH'),
      dock1: await parentOf('DOCK-1'),
      dock2: await parentOf('DOCK-2'),
      door: await parentOf('DOCK-2-DOOR'),
    }).toEqual({ south: null, dock1: 'NORTH', dock2: 'NORTH', door: 'DOCK-2' });
    expect(site.browser.consoleErrors).toEqual([]);
  });
});
