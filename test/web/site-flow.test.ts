import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/runtime.js';
import { genericJson, publisher } from '../ingest/helpers.js';
import { seriousAxeViolations } from './axe.js';
import { type Browser, hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * A site built from an empty organization through the web app alone, in Debian's Chromium
 * against the whole service: sign-up, a three-level location tree, ten assets with tags,
 * a location moved, renamed, a delete refused (the 409 explained) and a delete done, a
 * 1,000-row CSV import with five bad rows reported, an export downloaded, a reader added
 * and mapped to two rooms, reads published over MQTT with the credentials the readers
 * page shows, and the asset's page showing the move. Every state visited is checked with
 * axe at desktop and at phone size (375 px) and saved under
 * test-results/screenshots/site-flow-*.png. The service runs its embedded broker (as
 * e2e.test.ts does), so the reader's login is the one the page shows, also when
 * TEST_MQTT_URL points elsewhere.
 */

const EMAIL = 'site@example.test';
const PASSWORD = 'correct horse battery staple';
const ROWS = 1000;
const BAD = new Set([10, 200, 400, 600, 999]);

function sheet(): string {
  let csv = 'external_key,name,description,tags\r\n';
  for (let i = 0; i < ROWS; i++) {
    const key = `IMP-${String(i).padStart(4, '0')}`;
    if (BAD.has(i)) csv += i % 2 === 0 ? `${key},,,\r\n` : `${key},Bad tag,,nfc:${i}\r\n`;
    else csv += `${key},"Crate ${i}",,rfid:C${i}\r\n`;
  }
  return csv;
}

describe.skipIf(!hasChromium)(
  'a site built in the web app from an empty organization',
  { timeout: 120_000 },
  () => {
    let site: WebSite;
    let service: RunningService;
    let browser: Browser;
    let page: Page;
    let base: string;
    let firstAssetUrl = '';
    let mqttLogin = { username: '', password: '' };
    let brokerUrl = '';
    /** Paths whose 4xx answers the suite causes on purpose (the browser logs them as errors). */
    const expectedFailures = ['/internal/session'];

    const panel = () => page.locator('.location-panel');
    /** Screenshot and axe at desktop size, then the same state at 375 px, then back. */
    const check = async (state: string) => {
      await browser.screenshot(`site-flow-${state}`);
      expect(await seriousAxeViolations(page), `axe on ${state}`).toEqual([]);
      await page.setViewportSize({ width: 375, height: 812 });
      await browser.screenshot(`site-flow-${state}-375`);
      expect(await seriousAxeViolations(page), `axe on ${state} at 375 px`).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 800 });
    };
    // A location deeper down is reached as a person would: its ancestors opened first where
    // they are closed (the tree opens the selected location's path, and a re-render may
    // have closed a level opened before).
    const select = async (name: string, ...ancestors: string[]) => {
      for (const ancestor of ancestors) {
        const toggle = page.getByRole('button', { name: new RegExp(`^Sub-locations of ${ancestor} \\(`) });
        if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
      }
      await page.locator('.tree-row').getByRole('link', { name, exact: true }).click();
      await expect.poll(() => panel().locator('h2').textContent()).toBe(name);
    };
    /** `where`: 'top', or the name of the location to put it under. */
    const createLocation = async (name: string, key: string, where: string) => {
      await page.getByLabel('Name', { exact: true }).first().fill(name);
      await page.getByLabel('External key', { exact: true }).fill(key);
      await page
        .getByRole('radio', { name: where === 'top' ? 'At the top level' : `Under ${where}` })
        .check();
      await page.getByRole('button', { name: 'Create location' }).click();
      await expect.poll(() => panel().locator('h2').textContent()).toBe(name);
    };
    const pickLocation = async (scope: ReturnType<Page['locator']>, search: string, key: string) => {
      await scope.getByLabel('Search locations').fill(search);
      const picker = scope.getByLabel(/^Location/);
      let label = '';
      await expect
        .poll(async () => {
          label =
            (await picker.locator('option').allTextContents()).find((o) => o.includes(`(${key})`)) ?? '';
          return label;
        })
        .not.toBe('');
      await picker.selectOption({ label });
      return label;
    };

    beforeAll(async () => {
      site = await startWebSite({
        name: 'site',
        // The signed-out session probe answers 401; the refused delete answers 409.
        expectedFailures,
      });
      ({ service, browser, page, base } = site);
    }, 120_000);

    afterAll(async () => {
      await site?.close();
    });

    it('signs up into an empty organization', async () => {
      // A fresh install has nobody to sign in as: it opens on sign-up for the first administrator.
      await page.goto(base);
      await page.waitForURL(/\/sign-up$/);
      await page.getByLabel('Organization name').fill('Harbour Depot');
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await check('sign-up');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.waitForURL(/\/locations$/);
      await page.getByText('No locations yet').waitFor();
      await check('empty');
    });

    it('builds a three-level location tree', async () => {
      await createLocation('Site', 'SITE', 'top');
      await createLocation('Hall A', 'HALL-A', 'Site');
      await createLocation('Room 1', 'ROOM-1', 'Hall A');
      await select('Hall A');
      await createLocation('Room 2', 'ROOM-2', 'Hall A');
      await select('Site');
      await createLocation('Hall B', 'HALL-B', 'Site');
      await select('Site');
      await createLocation('Annex', 'ANNEX', 'Site');
      await expect
        .poll(() => page.getByRole('button', { name: 'Sub-locations of Site (3)' }).count())
        .toBe(1);
      await select('Room 2', 'Site', 'Hall A');
      await expect
        .poll(() => panel().getByRole('navigation', { name: 'Path' }).textContent())
        .toBe('SiteHall ARoom 2');
      await check('tree');
    });

    it('moves a room, renames a key, refuses a delete with the reason, deletes a leaf', async () => {
      const move = panel().locator('section', { has: page.getByRole('heading', { name: 'Move' }) });
      const target = await pickLocation(move, 'Hall B', 'HALL-B');
      await move.getByRole('button', { name: `Move under ${target.split(' › ').pop()}` }).click();
      await expect
        .poll(() => panel().getByRole('navigation', { name: 'Path' }).textContent())
        .toBe('SiteHall BRoom 2');
      await check('moved');

      await select('Room 1', 'Site', 'Hall A');
      const rename = panel().locator('form', { has: page.getByRole('heading', { name: 'Rename key' }) });
      await rename.getByLabel('New external key').fill('ROOM-101');
      await rename.getByRole('button', { name: 'Rename…' }).click();
      await rename.locator('.confirm').waitFor();
      await check('rename-confirm');
      await rename.getByRole('button', { name: 'Confirm rename' }).click();
      await expect.poll(() => panel().locator('.facts').textContent()).toContain('ROOM-101');

      await select('Hall A');
      const remove = panel().locator('section', { has: page.getByRole('heading', { name: 'Delete' }) });
      await remove.getByRole('button', { name: 'Delete location…' }).click();
      await remove.getByRole('button', { name: 'Delete for good' }).click();
      const alert = remove.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        'location HALL-A has 1 child location(s); move or delete them first (no cascade)',
      );
      await check('delete-refused');

      await select('Annex');
      // The panel's requests for Annex still on their way when it is deleted (a slow network:
      // TAGTRAIL_TEST_API_JITTER_MS=1500 saw its assets list) answer 404; the page has left
      // the panel and drops them, but the browser logs each as a failed resource.
      const annex = new URL(page.url()).searchParams.get('selected');
      expectedFailures.push(`/internal/locations/${annex}`, `/internal/locations/${annex}/assets`);
      await panel().getByRole('button', { name: 'Delete location…' }).click();
      await panel().getByRole('button', { name: 'Delete for good' }).click();
      await page.waitForURL((url) => !url.searchParams.has('selected'));
      await expect.poll(() => page.locator('.tree-row').getByRole('link', { name: 'Annex' }).count()).toBe(0);
      await check('deleted');
    });

    it('registers ten assets with tags', async () => {
      for (let i = 1; i <= 10; i++) {
        const n = String(i).padStart(2, '0');
        await page.goto(`${base}/assets/new`);
        await page.getByRole('heading', { name: 'New asset', level: 1 }).waitFor();
        await page.getByLabel('Name', { exact: true }).fill(`Trolley ${n}`);
        await page.getByLabel('External key').fill(`TR-${n}`);
        await page.getByLabel('Tag 1 type').selectOption('rfid');
        await page.getByLabel('Tag 1 value').fill(`E2000000${n}`);
        if (i === 1) {
          await page.getByRole('button', { name: 'Add another tag' }).click();
          await page.getByLabel('Tag 2 type').selectOption('barcode');
          await page.getByLabel('Tag 2 value').fill('BC-TR-01');
          await check('asset-new');
        }
        await page.getByRole('button', { name: 'Create asset' }).click();
        await page.waitForURL(/\/assets\/\d+$/);
        await page.getByRole('heading', { name: `Trolley ${n}`, level: 1 }).waitFor();
        await expect.poll(() => page.locator('.tag-list').textContent()).toContain(`E2000000${n}`);
        if (i === 1) {
          firstAssetUrl = page.url();
          expect(await page.locator('.tag-list').textContent()).toContain('BC-TR-01');
          await check('asset-created');
        }
      }
      await page.goto(`${base}/assets`);
      await expect.poll(() => page.locator('.pager-status').first().textContent()).toBe('1–10 of 10');
      await check('assets');
    });

    it('imports 1,000 rows from a CSV, five bad rows reported, and exports', async () => {
      await page.goto(`${base}/import`);
      await page.getByRole('heading', { name: 'Import and export' }).waitFor();
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'crates.csv', mimeType: 'text/csv', buffer: Buffer.from(sheet()) });
      await page.getByRole('button', { name: 'Check file' }).click();
      const checked = page.getByRole('status').filter({ hasText: 'Checked' });
      await checked.waitFor({ timeout: 60_000 });
      expect(await checked.textContent()).toContain(
        '1000 rows — 995 to create, 0 to change, 0 unchanged, 5 refused',
      );
      await check('import-checked');
      await page.getByRole('button', { name: 'Import 995 rows' }).click();
      const imported = page.getByRole('status').filter({ hasText: 'Imported' });
      await imported.waitFor({ timeout: 90_000 });
      expect(await imported.textContent()).toContain('995 created');
      expect(await page.locator('table tbody tr').count()).toBe(5);
      await check('import-done');
      const [report] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download refused rows (CSV)' }).click(),
      ]);
      const refused = (await readFile((await report.path())!, 'utf8')).trim().split('\r\n');
      expect(refused.slice(1).map((l) => l.split(',')[1])).toEqual([
        'IMP-0010',
        'IMP-0200',
        'IMP-0400',
        'IMP-0600',
        'IMP-0999',
      ]);

      await page.getByLabel('Search').fill('trolley');
      const [exported] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download CSV' }).click(),
      ]);
      expect(exported.suggestedFilename()).toMatch(/^assets-\d{4}-\d{2}-\d{2}\.csv$/);
      const rows = (await readFile((await exported.path())!, 'utf8')).trim().split('\r\n');
      expect(rows[0]!.split(',')[0]).toBe('external_key');
      expect(
        rows
          .slice(1)
          .map((l) => l.split(',')[0])
          .sort(),
      ).toEqual(Array.from({ length: 10 }, (_, i) => `TR-${String(i + 1).padStart(2, '0')}`));
      expect(rows.find((l) => l.startsWith('TR-01,'))).toContain('BC-TR-01');
    });

    it('registers a reader and maps its antennas to the two rooms', async () => {
      await page.goto(`${base}/readers`);
      await page.getByRole('heading', { name: 'Readers and scan points' }).waitFor();
      await expect.poll(() => page.locator('#broker-url').textContent()).toMatch(/^mqtts?:\/\//);
      brokerUrl = (await page.locator('#broker-url').textContent())!;
      await page.getByLabel('Name', { exact: true }).fill('Room door reader');
      await page.getByLabel('Family').selectOption('generic-json');
      await page.getByLabel('Identity').fill('door-1');
      await page.getByLabel('MQTT topic').fill('harbour/door-1/reads');
      await page.getByRole('button', { name: 'Add reader' }).click();
      const card = page.getByRole('article', { name: 'Room door reader' });
      await card.waitFor();
      await page.locator('#mqtt-password').waitFor();
      mqttLogin = {
        username: await page.locator('#mqtt-username').inputValue(),
        password: await page.locator('#mqtt-password').inputValue(),
      };
      expect(mqttLogin.password.length).toBeGreaterThan(20);
      await check('reader-credentials');
      await page.getByRole('button', { name: 'Done' }).click();

      for (const [antenna, search, key] of [
        ['1', 'Room 1', 'ROOM-101'],
        ['2', 'Room 2', 'ROOM-2'],
      ] as const) {
        await card.getByRole('button', { name: 'Map an antenna' }).click();
        await card.getByLabel('Antenna', { exact: true }).fill(antenna);
        await pickLocation(card, search, key);
        if (antenna === '1') await check('reader-mapping');
        await card.getByRole('button', { name: 'Map antenna', exact: true }).click();
        await card.getByText(new RegExp(`Antenna ${antenna} → .*${key}`)).waitFor();
      }
      await check('readers');
    });

    it('reads published over MQTT as that reader move the asset; its page shows the move', async () => {
      // The service subscribes to a new reader's topic in the background: wait for that, not a time.
      await service.ingest.serving('harbour/door-1/reads', 30_000);
      const client = await publisher(brokerUrl, { login: mqttLogin });
      try {
        const t0 = Date.now() - 10 * 60_000;
        await client.publishAsync(
          'harbour/door-1/reads',
          genericJson([['E200000001', 1, new Date(t0).toISOString()]]),
          { qos: 1 },
        );
        await client.publishAsync(
          'harbour/door-1/reads',
          genericJson([['E200000001', 2, new Date(t0 + 5 * 60_000).toISOString()]]),
          { qos: 1 },
        );
      } finally {
        await client.endAsync();
      }
      const card = page.getByRole('article', { name: 'Room door reader' });
      await expect
        .poll(
          async () => {
            await page.reload();
            return card.getByText('Good reads').locator('xpath=..').textContent();
          },
          { timeout: 30_000 },
        )
        .toBe('Good reads2');
      await check('reader-counted');

      await page.goto(firstAssetUrl);
      await page.getByRole('heading', { name: 'Trolley 01', level: 1 }).waitFor();
      const timeline = page.getByRole('list', { name: 'Where the asset has been' });
      await expect.poll(() => timeline.getByRole('listitem').count(), { timeout: 30_000 }).toBe(2);
      const [now, before] = await timeline.getByRole('listitem').allTextContents();
      expect(now).toContain('Room 2');
      expect(before).toContain('Room 1');
      expect(await page.getByRole('region', { name: 'Where it is now' }).textContent()).toContain('Room 2');
      await check('asset-moved');
    });

    it('made no request outside the service and logged no unexpected console error', () => {
      expect(browser.foreignRequests).toEqual([]);
      // The refused delete's 409 is logged by the browser as a failed resource.
      expect(browser.consoleErrors.filter((e) => !/Failed to load resource.*409/.test(e))).toEqual([]);
    });
  },
);
