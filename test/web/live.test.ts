import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { genericJson, publisher } from '../ingest/helpers.js';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * Live views (docs/events.md "Live views"): the report page follows reads published over
 * MQTT without a reload. A marker set on the page's window before the reads proves that
 * no reload happened (a reload would clear it), and the scroll position is kept.
 */
describe.skipIf(!hasChromium)(
  'the report page follows MQTT reads without reloading',
  { timeout: 120_000 },
  () => {
    let site: WebSite;
    let page: Page;
    const topic = 'live/door/reads';
    let login = { username: '', password: '' };
    let dock = 0;
    let shelf = 0;

    beforeAll(async () => {
      site = await startWebSite({
        name: 'live',
        signUp: { email: 'live@example.test', organization_name: 'Live Org' },
      });
      page = site.page;
      const location = async (name: string, key: string) =>
        (await site.internal('POST', '/internal/locations', { name, external_key: key })).body.data
          .id as number;
      dock = await location('Dock', 'DOCK');
      shelf = await location('Shelf', 'SHELF');
      const asset = await site.internal('POST', '/internal/assets', {
        name: 'Pallet 7',
        external_key: 'PAL-7',
        tags: [{ tag_type: 'rfid', value: 'E20000000000000000000777' }],
      });
      expect(asset.status).toBe(201);
      const reader = await site.internal('POST', '/internal/readers', {
        name: 'Door',
        family: 'generic-json',
        identity: 'door',
        topic,
        webhook: false,
      });
      expect(reader.status).toBe(201);
      login = { username: reader.body.data.mqtt_username, password: reader.body.mqtt_password };
      for (const [antenna, location_id] of [
        [1, dock],
        [2, shelf],
      ]) {
        const point = await site.internal('POST', `/internal/readers/${reader.body.data.id}/scan-points`, {
          antenna,
          location_id,
        });
        expect(point.status).toBe(201);
      }
      await site.service.ingest.serving(topic, 30_000);
      // As the other browser suites: building the web app and starting the service on a
      // loaded machine, then up to 30 s for the subscription, outlast the default 60 s.
    }, 120_000);
    afterAll(async () => {
      await site?.close();
    });

    const publish = async (antenna: number, at: number, tag = 'E20000000000000000000777') => {
      const client = await publisher(site.service.mqttUrl, { login });
      try {
        await client.publishAsync(topic, genericJson([[tag, antenna, new Date(at).toISOString()]]), {
          qos: 1,
        });
      } finally {
        await client.endAsync();
      }
    };

    it('a read appears in the report, and a move changes its row, with no reload', async () => {
      await page.setViewportSize({ width: 1200, height: 300 });
      await page.goto(`${site.base}/report`);
      await page.getByRole('heading', { name: 'Asset-location report' }).waitFor();
      await page.getByText('Nothing scanned yet.').waitFor();
      await page.evaluate("window.liveMarker = 'still here'; window.scrollTo(0, 120)");
      const scrolled = await page.evaluate('window.scrollY');

      const t0 = Date.now() - 60_000;
      await publish(1, t0);
      const row = page.getByRole('row', { name: /Pallet 7/ });
      await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Dock');

      await publish(2, t0 + 10_000);
      await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('Shelf');

      expect(await page.evaluate('window.liveMarker')).toBe('still here');
      expect(await page.evaluate('window.scrollY')).toBe(scrolled);
    });

    it('a read made while the page is still opening its stream shows once the stream is ready', async () => {
      const tag = 'E20000000000000000000888';
      const asset = await site.internal('POST', '/internal/assets', {
        name: 'Pallet 8',
        external_key: 'PAL-8',
        tags: [{ tag_type: 'rfid', value: tag }],
      });
      expect(asset.status).toBe(201);
      // The stream's request is held, as a slow network or a reconnect would: the page has
      // its data, the service sends the change notice, and nobody is listening yet.
      let openStream!: () => void;
      const held = new Promise<void>((resolve) => {
        openStream = resolve;
      });
      await page.route('**/internal/live', async (route) => {
        await held;
        await route.continue();
      });
      try {
        await page.goto(`${site.base}/report`);
        await page.getByRole('row', { name: /Pallet 7/ }).waitFor();
        await publish(1, Date.now() - 30_000, tag);
        // Stored: the change notice went out with the commit while the page was not listening.
        const placed = async () =>
          (
            await site.database.db.pool.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM asset_positions WHERE asset_id = $1',
              [asset.body.data.id],
            )
          ).rows[0]!.n;
        await expect.poll(placed, { timeout: 30_000 }).toBe(1);
        expect(await page.getByRole('row', { name: /Pallet 8/ }).count()).toBe(0);
        openStream();
        // Ready, the page refreshes once: the read it was never told about appears.
        const row = page.getByRole('row', { name: /Pallet 8/ });
        await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
        expect(await row.textContent()).toContain('Dock');
      } finally {
        openStream();
        await page.unroute('**/internal/live');
      }
    });

    it('a stream the browser gave up on (a 502 while the service restarts) is reopened, the session still live', async () => {
      const tag = 'E20000000000000000000999';
      const asset = await site.internal('POST', '/internal/assets', {
        name: 'Pallet 9',
        external_key: 'PAL-9',
        tags: [{ tag_type: 'rfid', value: tag }],
      });
      expect(asset.status).toBe(201);
      // The first stream meets a proxy's 502: EventSource closes for good on a non-200 answer.
      let attempts = 0;
      await page.route('**/internal/live', async (route) => {
        attempts += 1;
        if (attempts === 1) await route.fulfill({ status: 502, body: 'Bad Gateway' });
        else await route.continue();
      });
      try {
        const reopened = page.waitForResponse(
          (r) => r.url().endsWith('/internal/live') && r.status() === 200,
        );
        await page.goto(`${site.base}/report`);
        await page.getByRole('row', { name: /Pallet 7/ }).waitFor();
        await reopened;
        expect(page.url()).toBe(`${site.base}/report`);
        await publish(2, Date.now() - 20_000, tag);
        const row = page.getByRole('row', { name: /Pallet 9/ });
        await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
        expect(await row.textContent()).toContain('Shelf');
      } finally {
        await page.unroute('**/internal/live');
      }
    });

    it('an administrator adds a webhook endpoint on the Webhooks page; the secret is shown once', async () => {
      await page.setViewportSize({ width: 1200, height: 900 });
      await page.goto(`${site.base}/webhooks`);
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      expect(await seriousAxeViolations(page), 'axe on the webhooks page').toEqual([]);
      await page.getByLabel('URL').fill('https://erp.example.com/tagtrail');
      await page.getByLabel(/Asset seen for the first time/).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = page.getByLabel('Signing secret');
      await secret.waitFor();
      expect(await secret.inputValue()).toMatch(/^whsec_/);
      expect(await seriousAxeViolations(page), 'axe with the secret shown').toEqual([]);
      await page.getByRole('button', { name: 'I have stored the secret' }).click();
      const card = page.getByRole('article', { name: 'https://erp.example.com/tagtrail' });
      await card.waitFor();
      expect(await card.textContent()).toContain('asset.moved, asset.first_seen');
      await expect.poll(() => page.getByLabel('Signing secret').count()).toBe(0);
      await card.getByRole('button', { name: 'Show deliveries' }).click();
      await card.getByText('Nothing sent yet.').waitFor();
      await card.getByRole('button', { name: 'Disable' }).click();
      await card.getByRole('button', { name: 'Enable' }).waitFor();
    });
  },
);
