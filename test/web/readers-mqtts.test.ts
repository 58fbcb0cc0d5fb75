import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/runtime.js';
import { type CertificateFiles, selfSignedCertificate } from '../helpers/tls-certs.js';
import { seriousAxeViolations } from './axe.js';
import { type Browser, hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The readers page of a service whose embedded broker also listens with TLS
 * (TAGTRAIL_MQTT_TLS_CERT): the page offers the TLS address, and a reader set up from the
 * page alone (its address there, its login shown once) publishes over it.
 */
describe.skipIf(!hasChromium)('readers page with an MQTTS listener, in Chromium', { timeout: 60_000 }, () => {
  let site: WebSite;
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  let base: string;
  let dir: string;
  let certificate: CertificateFiles;
  let client: MqttClient | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-web-mqtts-'));
    certificate = selfSignedCertificate(dir, 'broker');
    site = await startWebSite({
      name: 'readers-mqtts',
      signUp: { email: 'mqtts@example.test', organization_name: 'Quay' },
      env: {
        TAGTRAIL_MQTT_TLS_CERT: certificate.cert,
        TAGTRAIL_MQTT_TLS_KEY: certificate.key,
        TAGTRAIL_MQTTS_PORT: '0',
      },
    });
    ({ service, browser, page, base } = site);
  }, 120_000);
  afterAll(async () => {
    await client?.endAsync(true).catch(() => undefined);
    await site?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows the TLS address, and a reader set up from the page publishes over it', async () => {
    await page.goto(`${base}/readers`);
    await page.getByRole('heading', { name: 'Readers and scan points' }).waitFor();
    const tlsUrl = service.broker.tlsUrl as string;
    expect(tlsUrl).toMatch(/^mqtts:\/\/127\.0\.0\.1:\d+$/);
    await expect.poll(() => page.locator('#broker-tls-url').textContent()).toBe(tlsUrl);
    expect(await page.locator('#broker-tls-port').textContent()).toBe(new URL(tlsUrl).port);
    expect(await page.locator('#broker-url').textContent()).toBe(service.mqttUrl);
    await page.getByText('Prefer the TLS address').waitFor();
    expect(await seriousAxeViolations(page), 'axe on the broker card with TLS').toEqual([]);
    await browser.screenshot('readers-mqtts');

    await page.getByLabel('Name', { exact: true }).fill('Quay reader');
    await page.getByLabel('Family').selectOption('generic-json');
    await page.getByLabel('Identity').fill('quay-1');
    await page.getByLabel('MQTT topic').fill('quay/1/reads');
    await page.getByRole('button', { name: 'Add reader' }).click();
    const card = page.getByRole('article', { name: 'Quay reader' });
    await card.waitFor();
    const username = await page.locator('#mqtt-username').inputValue();
    const password = await page.locator('#mqtt-password').inputValue();
    await page.getByRole('button', { name: 'Done' }).click();

    client = await connectAsync(
      (await page.locator('#broker-tls-url').textContent()) as string,
      {
        protocolVersion: 4,
        reconnectPeriod: 0,
        clientId: username,
        username,
        password,
        ca: await readFile(certificate.cert),
        rejectUnauthorized: true,
      },
      false,
    );
    await client.publishAsync(
      'quay/1/reads',
      JSON.stringify({ reads: [{ tag: 'E200000000000000000C0C0C', antenna: 1 }] }),
      { qos: 1 },
    );
    await page.reload();
    const reloaded = page.getByRole('article', { name: 'Quay reader' });
    await reloaded.waitFor();
    expect(await reloaded.getByText('MQTT connection').locator('xpath=..').textContent()).not.toContain(
      'not connected',
    );
    expect(await reloaded.getByText('Last message').locator('xpath=..').textContent()).not.toContain('never');
  });

  it('made no request outside the service and logged no console error', () => {
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});
