import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The web app once its session has spent its request budget (TAGTRAIL_SESSION_RATE_LIMIT,
 * docs/web-app.md "Sessions and CSRF"): the page stays, signed in, says how long to wait
 * where its data would be (not "Nothing scanned yet"), and works again once it has waited.
 */
describe.skipIf(!hasChromium)('the web app past its session’s request budget', { timeout: 120_000 }, () => {
  let site: WebSite;

  beforeAll(async () => {
    site = await startWebSite({
      name: 'session-limit',
      signUp: { email: 'busy@example.test', organization_name: 'Busy Depot' },
      // The least allowed: one request back a second.
      env: { TAGTRAIL_SESSION_RATE_LIMIT: '60' },
      expectedFailures: ['/internal/report', '/internal/live', '/internal/session', '/internal/assets'],
    });
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('shows the wait in the page’s alert, keeps the page and the session, and recovers', async () => {
    const { page } = site;
    await page.goto(`${site.base}/assets`);
    await page.getByRole('cell', { name: 'No assets yet.' }).waitFor();

    // The suite holds the browser's session: it spends the budget, and keeps taking every
    // token that comes back (one a second), so the page's next requests are refused.
    let hammering = true;
    const hammer = async () => {
      while (hammering) await site.internal('GET', '/internal/session');
    };
    const hammers = Array.from({ length: 4 }, hammer);
    try {
      await expect.poll(async () => (await site.internal('GET', '/internal/session')).status).toBe(429);
      const refused = page
        .getByRole('alert')
        .filter({ hasText: /^Too many requests from this session; try again in \d+ seconds?$/ });
      const served = page.getByText('Nothing scanned yet.');
      // A token comes back every second, and the page's request may take it before the
      // hammers do (on a loaded machine their gap is wider): then the report is served, and
      // the page goes to Assets and back to ask again.
      for (let attempt = 1; ; attempt++) {
        await page.getByRole('link', { name: 'Report' }).click();
        await page.getByRole('heading', { name: 'Asset-location report', level: 1 }).waitFor();
        await refused.or(served).first().waitFor();
        if (await refused.isVisible()) break;
        expect(attempt, 'the report was served every time: the budget never ran out').toBeLessThan(5);
        await page.getByRole('link', { name: 'Assets' }).click();
        await page.getByRole('heading', { name: 'Assets', level: 1 }).waitFor();
      }
      expect(await served.count()).toBe(0);
      // Still signed in, on the same page, with the navigation there.
      expect(new URL(page.url()).pathname).toBe('/report');
      expect(await page.getByRole('link', { name: 'Assets' }).count()).toBeGreaterThan(0);
    } finally {
      hammering = false;
      await Promise.all(hammers);
    }

    // A few tokens back (the report's stream reopens meanwhile and takes one).
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await page.getByRole('link', { name: 'Assets' }).click();
    await page.getByRole('cell', { name: 'No assets yet.' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(site.browser.consoleErrors).toEqual([]);
  });
});
