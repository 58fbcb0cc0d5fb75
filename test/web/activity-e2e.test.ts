import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The activity log in the web app (Debian's Chromium against the whole service): an
 * asset's page lists what was done to it with the changed values, a location's panel its
 * own, and the Activity page filters the organization's log by kind and actor. axe runs on
 * each, at desktop and phone width.
 */
describe.skipIf(!hasChromium)('activity log in the web app', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;
  let assetId: number;

  const noSeriousAxe = async (what: string) => {
    expect(await seriousAxeViolations(page), what).toEqual([]);
  };

  beforeAll(async () => {
    site = await startWebSite({
      name: 'activity',
      signUp: { email: 'ada@example.test', organization_name: 'Depot' },
    });
    page = site.page;
    const created = await site.internal('POST', '/internal/assets', {
      name: 'Pallet jack',
      external_key: 'PJ-1',
    });
    expect(created.status).toBe(201);
    assetId = created.body.data.id;
    const renamed = await site.internal('POST', `/internal/assets/${assetId}/rename`, {
      external_key: 'PJ-2',
    });
    expect(renamed.status).toBe(200);
    const location = await site.internal('POST', '/internal/locations', {
      name: 'Dock',
      external_key: 'DOCK',
    });
    expect(location.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it("shows an asset's activity on its page: who, what, and the value before and after", async () => {
    await page.goto(`${site.base}/assets/${assetId}`);
    const card = page.getByRole('region', { name: 'Activity' });
    const list = card.getByRole('list', { name: 'Activity of this asset' });
    await list.getByText('Asset PJ-1 created by ada@example.test').waitFor();
    const update = list.getByRole('listitem').filter({ hasText: 'Asset PJ-2 updated by ada@example.test' });
    await update.waitFor();
    expect(await update.textContent()).toContain('external_key: PJ-1 → PJ-2');

    await noSeriousAxe('asset page with its activity');
  });

  it('filters the organization’s activity by kind of record and by actor', async () => {
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
    const log = page.getByRole('list', { name: 'Activity', exact: true });
    await log.getByText('Location DOCK created by ada@example.test').waitFor();
    await log.getByText('Asset PJ-1 created by ada@example.test').waitFor();

    await page.getByLabel('Kind of record').selectOption('location');
    await page.waitForURL(/entity_type=location/);
    await log.getByText('Location DOCK created').waitFor();
    await expect.poll(() => log.getByText(/^Asset /).count()).toBe(0);

    await page.getByLabel('Kind of record').selectOption('');
    await page.getByLabel('By').selectOption({ label: 'the system' });
    await page.waitForURL(/actor=system/);
    // Sign-up's organization and first user have nobody behind them yet.
    await log.getByText('Organization Depot created by the system').waitFor();
    await expect.poll(() => log.getByText(/by ada@example\.test/).count()).toBe(0);
    await noSeriousAxe('activity page, filtered');

    await page.setViewportSize({ width: 375, height: 800 });
    await noSeriousAxe('activity page at phone width');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  });
});
