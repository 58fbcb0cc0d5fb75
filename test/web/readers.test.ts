import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/runtime.js';
import type { TestDatabase } from '../helpers/database.js';
import { seriousAxeViolations } from './axe.js';
import { type Browser, hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The readers page in Debian's Chromium against the whole service: where readers publish,
 * a reader added (its MQTT login shown once, then replaced), an antenna mapped to a room,
 * the reader and its scan point edited (the API's refusal shown in the form), and behind
 * the counters the unknown tags and refused reads, each a list of its own, with the
 * reader's health figures. Screenshots under test-results/screenshots/.
 */

describe.skipIf(!hasChromium)('readers page in Chromium', { timeout: 60_000 }, () => {
  let site: WebSite;
  let database: TestDatabase;
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    site = await startWebSite({
      name: 'readers',
      // A reader edit with a wildcard topic is refused on purpose (the first reader of this
      // fresh database, id 1).
      expectedFailures: ['/internal/readers/1'],
      signUp: { email: 'readers@example.test', organization_name: 'Yard' },
    });
    ({ database, service, browser, page, base } = site);
    const warehouse = await site.internal('POST', '/internal/locations', {
      name: 'Main warehouse',
      external_key: 'WH-1',
    });
    expect(warehouse.status, JSON.stringify(warehouse.body)).toBe(201);
    const dock = await site.internal('POST', '/internal/locations', {
      name: 'Dock 1',
      external_key: 'DOCK-1',
      parent_id: warehouse.body.data.id,
    });
    expect(dock.status, JSON.stringify(dock.body)).toBe(201);
  }, 120_000);
  afterAll(() => site?.close());

  it('adds a reader, maps an antenna, edits both, and shows which tag and what error', async () => {
    await page.goto(`${base}/readers`);
    await page.getByRole('heading', { name: 'Readers and scan points' }).waitFor();
    // Where readers publish: the broker's real address (here on a port of its own choosing).
    await expect.poll(() => page.locator('#broker-url').textContent()).toBe(service.mqttUrl);
    expect(await page.locator('#broker-port').textContent()).toBe(new URL(service.mqttUrl).port);
    // No MQTTS listener configured: no TLS address offered.
    expect(await page.locator('#broker-tls-url').count()).toBe(0);
    await page.getByLabel('Name', { exact: true }).fill('Dock door reader');
    await page.getByLabel('Family').selectOption('impinj-r700');
    await page.getByLabel('Identity').fill('r700-dock-1');
    await page.getByLabel('MQTT topic').fill('acme/dock-1/reads');
    await page.getByRole('button', { name: 'Add reader' }).click();

    const card = page.getByRole('article', { name: 'Dock door reader' });
    await card.waitFor();
    // Its MQTT login, shown once; a new password replaces it.
    const password = page.locator('#mqtt-password');
    await password.waitFor();
    expect(await page.locator('#mqtt-username').inputValue()).toMatch(/^reader-\d+$/);
    const first = await password.inputValue();
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Done' }).click();
    await card.getByRole('button', { name: 'New MQTT password for Dock door reader' }).click();
    await card.getByRole('button', { name: 'Yes, replace' }).click();
    await expect.poll(() => password.inputValue()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await password.inputValue()).not.toBe(first);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await card.getByText('Last message').locator('xpath=..').textContent()).toContain('never');
    for (const label of [
      'Good reads',
      'Bad reads',
      'Unknown tags',
      'Reads per minute',
      'Errors per minute',
    ]) {
      expect(await card.getByText(label, { exact: true }).locator('xpath=..').textContent()).toContain('0');
    }
    // Its health: not logged in to the embedded broker yet, no error so far.
    expect(await card.getByText('MQTT connection').locator('xpath=..').textContent()).toContain(
      'not connected',
    );
    expect(await card.getByText('Last error').locator('xpath=..').textContent()).toContain('none');
    await card.getByRole('button', { name: 'Map an antenna' }).click();
    await card.getByLabel('Antenna', { exact: true }).fill('1');
    await card.getByLabel('Search locations').fill('Dock');
    const select = card.getByLabel(/^Location/);
    await expect
      .poll(() => select.locator('option').allTextContents())
      .toEqual(['Choose a location…', 'Main warehouse › Dock 1 (DOCK-1)']);
    await select.selectOption({ label: 'Main warehouse › Dock 1 (DOCK-1)' });
    await browser.screenshot('readers-mapping');
    await card.getByRole('button', { name: 'Map antenna', exact: true }).click();
    await card.getByText('Antenna 1 → Dock 1 (DOCK-1)').waitFor();
    await browser.screenshot('readers');

    // Editing the reader: the API's refusal shown under the topic field, then a new identity and topic.
    await card.getByRole('button', { name: 'Edit reader Dock door reader' }).click();
    const edit = card.getByRole('form', { name: 'Edit reader Dock door reader' });
    await edit.getByLabel('MQTT topic').fill('acme/dock-1/#');
    await edit.getByRole('button', { name: 'Save reader' }).click();
    await expect.poll(() => edit.locator('.field-error').textContent()).toContain('without the wildcards');
    expect(await edit.getByLabel('MQTT topic').getAttribute('aria-invalid')).toBe('true');
    expect(await edit.getByRole('alert').textContent()).toBe('Check the field marked above.');
    await edit.getByLabel('MQTT topic').fill('acme/dock-1/r700');
    await edit.getByLabel('Identity').fill('r700-dock-1b');
    expect(await seriousAxeViolations(page), 'axe on the reader edit form').toEqual([]);
    await browser.screenshot('readers-edit');
    await edit.getByRole('button', { name: 'Save reader' }).click();
    await card.getByText('acme/dock-1/r700').waitFor();
    expect(await card.getByText('r700-dock-1b').count()).toBe(1);
    // And its scan point: antenna 1 becomes antenna 2, same location.
    await card.getByRole('button', { name: 'Edit Antenna 1 of Dock door reader' }).click();
    const point = card.getByRole('form', { name: 'Edit a scan point of Dock door reader' });
    await point.getByLabel('Antenna', { exact: true }).fill('2');
    await point.getByRole('button', { name: 'Save scan point' }).click();
    await card.getByText('Antenna 2 → Dock 1 (DOCK-1)').waitFor();
    // Removing a scan point asks first, as every other destructive action does.
    await card.getByRole('button', { name: 'Remove Antenna 2 of Dock door reader' }).click();
    const question = card.getByRole('group', { name: 'Remove Antenna 2 of Dock door reader?' });
    await question.waitFor();
    // The question takes the focus in an effect after it renders: poll, as elsewhere.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    expect(await seriousAxeViolations(page), 'axe on the scan point question').toEqual([]);
    await question.getByRole('button', { name: 'Cancel' }).click();
    await card.getByRole('button', { name: 'Remove Antenna 2 of Dock door reader' }).waitFor();
    expect(await card.getByText('Antenna 2 → Dock 1 (DOCK-1)').count()).toBe(1);

    // Behind the counters: which tag, what error (a message as the ingest logs it).
    const { rows } = await database.db.pool.query<{ id: number; org_id: number }>(
      `UPDATE readers SET bad_reads = 1, unknown_reads = 1, last_error_at = now(),
         rate_minute = date_trunc('minute', now()), rate_reads = 2, rate_errors = 1
       WHERE name = 'Dock door reader' RETURNING id, org_id`,
    );
    const event = {
      timestamp: '2026-03-02T10:15:00.000Z',
      eventType: 'tagInventory',
      tagInventoryEvent: { epcHex: 'E200000000000000000B0B0B', antennaPort: 2 },
    };
    await database.db.pool.query(
      `INSERT INTO raw_messages (received_at, org_id, reader_id, source, payload, bad_reads, unknown_reads, errors)
       VALUES ('2026-03-02T10:15:01Z', $1, $2, 'mqtt', $3, 1, 1, ARRAY['no scan point for antenna 7'])`,
      [rows[0]!.org_id, rows[0]!.id, JSON.stringify(event)],
    );
    await page.reload();
    const reloaded = page.getByRole('article', { name: 'Dock door reader' });
    const unknown = reloaded.getByRole('table', { name: 'Unknown tags of Dock door reader' });
    await unknown.waitFor();
    const cells = await unknown.getByRole('row').nth(1).getByRole('cell').allTextContents();
    expect(cells.slice(0, 3)).toEqual(['E200000000000000000B0B0B', 'RFID', '2']);
    const bad = reloaded.getByRole('list', { name: 'Bad reads of Dock door reader' });
    expect(await bad.textContent()).toContain('no scan point for antenna 7');
    await reloaded.getByText('Messages as received').click();
    const messages = reloaded.getByRole('list', { name: 'Latest problem messages of Dock door reader' });
    expect(await messages.textContent()).toContain('E200000000000000000B0B0B');
    expect(await seriousAxeViolations(page), 'axe on the reader problems').toEqual([]);
    await browser.screenshot('readers-problems');
    // The health figures of those reads (2 and 1, a little less if the minute turned meanwhile).
    const figure = async (label: string) =>
      Number(await reloaded.getByText(label, { exact: true }).locator('xpath=../dd').textContent());
    expect(await figure('Reads per minute')).toBeGreaterThan(1);
    expect(await figure('Errors per minute')).toBeGreaterThan(0);
    const lastError = await reloaded.getByText('Last error').locator('xpath=../dd').textContent();
    expect(lastError).not.toContain('none');
    // A time names its zone (the browser's), so nobody has to guess whether it is UTC.
    const zone = await page.evaluate(
      () =>
        new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
          .formatToParts(new Date())
          .find((p) => p.type === 'timeZoneName')?.value,
    );
    expect(lastError?.endsWith(` ${zone}`)).toBe(true);
  });

  it('made no request outside the service and logged no console error', () => {
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});
