import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { type Browser, hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * Spreadsheet import in the web app, in Debian's Chromium against the whole service: a
 * 1,000-row CSV with five bad rows is checked (a dry run that writes nothing and lists
 * each row), imported with progress, the refused rows downloaded with the API's codes,
 * and the assets exported again. axe runs on each state, at desktop and phone size.
 */

const ROWS = 1000;
const BAD = new Set([10, 200, 400, 600, 999]);

function sheet(): string {
  let csv = 'external_key,name,description,tags\r\n';
  for (let i = 0; i < ROWS; i++) {
    const key = `IMP-${String(i).padStart(4, '0')}`;
    if (BAD.has(i)) csv += i % 2 === 0 ? `${key},,,\r\n` : `${key},Bad tag,,nfc:${i}\r\n`;
    else csv += `${key},"Crate ${i}","Aisle ${i % 20}, bay ${i % 7}",rfid:E${i}\r\n`;
  }
  return csv;
}

describe.skipIf(!hasChromium)('spreadsheet import in the web app', { timeout: 90_000 }, () => {
  let site: WebSite;
  let browser: Browser;
  let page: Page;
  let base: string;
  let cookie = '';

  const assetCount = async () => {
    const res = await fetch(`${base}/internal/assets?limit=1`, { headers: { cookie } });
    return ((await res.json()) as { total_count: number }).total_count;
  };
  const expectNoSeriousAxe = async (target: Page, what: string) => {
    expect(await seriousAxeViolations(target), what).toEqual([]);
  };

  beforeAll(async () => {
    site = await startWebSite({
      name: 'import',
      signUp: { email: 'ada@example.test', organization_name: 'Depot' },
    });
    ({ browser, page, base } = site);
    cookie = site.session!.cookie;
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('checks a 1,000-row file: every row listed, the five bad ones refused, nothing written', async () => {
    await page.goto(`${base}/import`);
    await page.getByRole('heading', { name: 'Import and export' }).waitFor();
    await expectNoSeriousAxe(page, 'import page');
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'crates.csv', mimeType: 'text/csv', buffer: Buffer.from(sheet()) });
    // The check is held: meanwhile the file cannot be changed under it (its answer would be
    // shown for the other file, and "Import N rows" would import that one).
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const importCall = (url: URL) => url.pathname === '/internal/import/assets';
    await page.route(importCall, async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Check file' }).click();
    await expect.poll(() => page.getByLabel('CSV file').isDisabled()).toBe(true);
    release();
    const status = page.getByRole('status').filter({ hasText: 'Checked' });
    await status.waitFor();
    await page.unroute(importCall);
    expect(await page.getByLabel('CSV file').isDisabled()).toBe(false);
    expect(await status.textContent()).toContain(
      '1000 rows — 995 to create, 0 to change, 0 unchanged, 5 refused',
    );
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(5);
    expect(await rows.first().textContent()).toContain('name');
    expect(await rows.first().textContent()).toContain('required');
    expect(await assetCount()).toBe(0);
    await browser.screenshot('import-dry-run');
    await expectNoSeriousAxe(page, 'dry-run result');
  });

  it('imports with progress, then offers the refused rows with their codes as CSV', async () => {
    await page.getByRole('button', { name: 'Import 995 rows' }).click();
    const status = page.getByRole('status').filter({ hasText: 'Imported' });
    await status.waitFor({ timeout: 60_000 });
    expect(await status.textContent()).toContain('995 created');
    expect(await assetCount()).toBe(995);
    await browser.screenshot('import-applied');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download refused rows (CSV)' }).click(),
    ]);
    const report = (await readFile((await download.path())!, 'utf8')).trim().split('\r\n');
    expect(report[0]).toBe('row,external_key,error_type,field,code,message');
    expect(report.slice(1).map((l) => l.split(',').slice(0, 5).join(','))).toEqual([
      '12,IMP-0010,validation_error,name,required',
      '202,IMP-0200,validation_error,name,required',
      '402,IMP-0400,validation_error,name,required',
      '602,IMP-0600,validation_error,name,required',
      '1001,IMP-0999,validation_error,tags[0].tag_type,invalid_value',
    ]);
  });

  it('exports what the filters select, as CSV that imports back unchanged', async () => {
    await page.getByLabel('Search').fill('crate 99');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^assets-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await readFile((await download.path())!, 'utf8');
    const keys = csv
      .trim()
      .split('\r\n')
      .slice(1)
      .map((l) => l.split(',')[0]);
    expect(keys).toEqual([
      'IMP-0099',
      ...Array.from({ length: 10 }, (_, i) => `IMP-099${i}`).filter((k) => k !== 'IMP-0999'),
    ]);
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'again.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Check file' }).click();
    const status = page.getByRole('status').filter({ hasText: 'Checked' });
    await status.waitFor();
    expect(await status.textContent()).toContain('0 to create, 0 to change, 10 unchanged, 0 refused');
  });

  it('has no serious accessibility violation at phone size', async () => {
    const phone = await browser.context.newPage();
    await phone.setViewportSize({ width: 375, height: 740 });
    await phone.goto(`${base}/import?kind=locations`);
    await phone.getByRole('heading', { name: 'Import locations' }).waitFor();
    await browser.screenshot('import-375', phone);
    await expectNoSeriousAxe(phone, 'import page, phone');
    await phone.close();
  });

  it('made no request outside the service and logged no unexpected console error', () => {
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});
