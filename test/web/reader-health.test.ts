import type { MqttClient } from 'mqtt';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publisher } from '../ingest/helpers.js';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * A reader's health on its card in Chromium (docs/web-app.md "Reader health"), while a
 * real reader logs in to the embedded broker, publishes and leaves: connected or not, reads
 * and errors per minute, the last error. (test/web/readers.test.ts sets the figures in the
 * database; this one gets them through the whole ingest path.)
 */
describe.skipIf(!hasChromium)(
  'a reader card shows the health of a publishing reader',
  { timeout: 120_000 },
  () => {
    let site: WebSite;
    let page: Page;
    const topic = 'acme/dock-1/r700';
    let login = { username: '', password: '' };
    let client: MqttClient | undefined;

    beforeAll(async () => {
      site = await startWebSite({
        name: 'reader-health',
        signUp: { email: 'ops@example.test', organization_name: 'Acme Logistics' },
      });
      page = site.page;
      const dock = await site.internal('POST', '/internal/locations', {
        name: 'Dock 1',
        external_key: 'DOCK-1',
      });
      expect(dock.status).toBe(201);
      const asset = await site.internal('POST', '/internal/assets', {
        name: 'Pallet jack',
        external_key: 'PJ-1',
        tags: [{ tag_type: 'rfid', value: 'E20000000000000000000A01' }],
      });
      expect(asset.status).toBe(201);
      const reader = await site.internal('POST', '/internal/readers', {
        name: 'Dock door reader',
        family: 'impinj-r700',
        identity: 'r700-dock-1b',
        topic,
        webhook: false,
      });
      expect(reader.status).toBe(201);
      const readerId = reader.body.data.id;
      login = { username: reader.body.data.mqtt_username, password: reader.body.mqtt_password };
      const point = await site.internal('POST', `/internal/readers/${readerId}/scan-points`, {
        antenna: 2,
        location_id: dock.body.data.id,
      });
      expect(point.status).toBe(201);
      await site.service.ingest.serving(topic, 30_000);
      // As the other browser suites: building the web app and starting the service on a
      // loaded machine, then up to 30 s for the subscription, outlast the default 60 s.
    }, 120_000);
    afterAll(async () => {
      await client?.endAsync(true).catch(() => undefined);
      await site?.close();
    });

    const card = () => page.getByRole('article', { name: 'Dock door reader' });
    const fact = async (label: string) =>
      (await card().getByText(label, { exact: true }).locator('xpath=../dd').textContent())?.trim();

    it('shows the connection, reads and errors per minute and the last error of a publishing reader', async () => {
      await page.goto(`${site.base}/readers`);
      await card().waitFor();
      expect(await fact('MQTT connection')).toBe('not connected');
      expect([await fact('Reads per minute'), await fact('Errors per minute')]).toEqual(['0', '0']);
      expect(await fact('Last error')).toBe('none');

      client = await publisher(site.service.mqttUrl, { login });
      const event = (epc: string, antennaPort: number) => ({
        timestamp: new Date().toISOString(),
        eventType: 'tagInventory',
        tagInventoryEvent: { epcHex: epc, antennaPort },
      });
      // One read placed, one from an antenna without a scan point (an error), one unknown tag.
      await client.publishAsync(
        topic,
        JSON.stringify([
          event('E20000000000000000000A01', 2),
          event('E20000000000000000000A01', 7),
          event('E200000000000000000B0B0B', 2),
        ]),
        { qos: 1 },
      );
      await page.reload();
      await card().waitFor();
      expect(await fact('MQTT connection')).toBe('connected');
      // 3 and 1, a little less if the minute turned between the publish and the page.
      expect(Number(await fact('Reads per minute'))).toBeGreaterThan(2);
      expect(Number(await fact('Errors per minute'))).toBeGreaterThan(0);
      expect(await fact('Last error')).not.toBe('none');
      expect(await seriousAxeViolations(page), 'axe on the reader health').toEqual([]);
      await site.browser.screenshot('readers-health');

      await client.endAsync();
      client = undefined;
      // The client's end resolves before the broker has handled the closed socket: reload
      // until the page says so, within a generous bound.
      await expect
        .poll(
          async () => {
            await page.reload();
            await card().waitFor();
            return fact('MQTT connection');
          },
          { timeout: 30_000 },
        )
        .toBe('not connected');
    });
  },
);
