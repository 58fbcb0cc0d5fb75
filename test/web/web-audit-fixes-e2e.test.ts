import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * What a web-app audit found: a location picker kept showing a location's old key and
 * path after a rename or move until its search text changed; the location page named tag
 * types otherwise than the asset page; the broker address broke mid-value at desktop width;
 * and the reader form's topic field said what it wants only by a placeholder.
 */

/** How many lines the element's text was laid out over. */
const lines = (page: Page, selector: string) =>
  page.locator(selector).evaluate((e) => {
    const range = document.createRange();
    range.selectNodeContents(e);
    return new Set(
      Array.from(range.getClientRects())
        .filter((r) => r.width > 0)
        .map((r) => Math.round(r.top)),
    ).size;
  });

const pageOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe.skipIf(!hasChromium)('web audit fixes', { timeout: 120_000 }, () => {
  let site: WebSite;
  let page: Page;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    site = await startWebSite({
      name: 'web-audit',
      signUp: { email: 'ana@example.test', organization_name: 'Depot' },
    });
    page = site.page;
    for (const [name, key, parent] of [
      ['Hall', 'HALL', null],
      ['Yard', 'YARD', null],
      ['Dock', 'DOCK', 'HALL'],
    ] as const) {
      const made = await site.internal('POST', '/internal/locations', {
        name,
        external_key: key,
        ...(parent ? { parent_id: ids[parent] } : {}),
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      ids[key] = made.body.data.id;
    }
    const reader = await site.internal('POST', '/internal/readers', {
      name: 'Gate',
      family: 'generic-json',
      identity: 'gate-1',
      topic: 'depot/gate-1/reads',
      webhook: false,
    });
    expect(reader.status, JSON.stringify(reader.body)).toBe(201);
  }, 120_000);
  afterAll(() => site?.close());

  it("a scan point's picker shows a location's new key and path after it changes elsewhere", async () => {
    await page.goto(`${site.base}/readers`);
    const card = page.getByRole('article', { name: 'Gate' });
    await card.getByRole('button', { name: 'Map an antenna' }).click();
    await card.getByLabel('Search locations').fill('Dock');
    const options = card.getByLabel(/^Location/).locator('option');
    // Exactly the search's matches: the picker has run its search (an empty search lists all).
    await expect.poll(() => options.allTextContents()).toEqual(['Choose a location…', 'Hall › Dock (DOCK)']);

    // Renamed and moved by someone else: the search text stays, the option follows.
    expect(
      (await site.internal('POST', `/internal/locations/${ids.DOCK}/rename`, { external_key: 'DOCK-2' }))
        .status,
    ).toBe(200);
    expect(
      (await site.internal('PATCH', `/internal/locations/${ids.DOCK}`, { parent_id: ids.YARD })).status,
    ).toBe(200);
    await expect.poll(() => options.allTextContents(), { timeout: 10_000 }).toContain('Yard › Dock (DOCK-2)');
  });

  it("a location's Move picker follows the move it just made", async () => {
    await page.goto(`${site.base}/locations?selected=${ids.DOCK}`);
    const move = page.locator('section', { has: page.getByRole('heading', { name: 'Move' }) });
    // The empty search lists every location, Dock among them: no search text changes below.
    const options = move.getByLabel(/^Location/).locator('option');
    await expect
      .poll(() => options.allTextContents())
      .toContain('Yard › Dock (DOCK-2) (this location itself)');
    await move.getByLabel(/^Location/).selectOption({ label: 'Hall (HALL)' });
    await move.getByRole('button', { name: 'Move under Hall (HALL)' }).click();
    await expect
      .poll(() => options.allTextContents(), { timeout: 10_000 })
      .toContain('Hall › Dock (DOCK-2) (this location itself)');
  });

  it('the location page names tag types as the asset page does', async () => {
    expect(
      (
        await site.internal('POST', `/internal/locations/${ids.YARD}/tags`, {
          tag_type: 'ble',
          value: 'BEACON-1',
        })
      ).status,
    ).toBe(201);
    await page.goto(`${site.base}/locations?selected=${ids.YARD}`);
    const type = page.getByLabel('Tag type');
    await type.waitFor();
    expect(await type.locator('option').allTextContents()).toEqual(['RFID', 'BLE', 'Barcode']);
    await expect.poll(() => page.locator('.badge.tag-kind').allTextContents()).toEqual(['BLE']);
    await page.getByRole('button', { name: 'Detach BLE tag BEACON-1' }).waitFor();
  });

  it('keeps the broker address whole at 1280px, without page overflow at 390px', async () => {
    await page.goto(`${site.base}/readers`);
    await expect.poll(() => page.locator('#broker-url').textContent()).toBe(site.service.mqttUrl);
    expect(await lines(page, '#broker-url')).toBe(1);
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.locator('#broker-url').waitFor();
      expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("says what a reader's MQTT topic is, in the new and the edit form", async () => {
    await page.goto(`${site.base}/readers`);
    const hint = /The MQTT topic this reader publishes to; unique across the broker, without \+ or #/;
    const field = page.locator('#reader-topic');
    await field.waitFor();
    const describedBy = await field.getAttribute('aria-describedby');
    expect(describedBy).toBeTruthy();
    expect(await page.locator(`#${describedBy}`).textContent()).toMatch(hint);

    const card = page.getByRole('article', { name: 'Gate' });
    await card.getByRole('button', { name: 'Edit reader Gate' }).click();
    const edit = card.getByRole('form', { name: 'Edit reader Gate' }).getByLabel('MQTT topic');
    const editHint = await edit.getAttribute('aria-describedby');
    expect(editHint).toBeTruthy();
    expect(await page.locator(`#${editHint}`).textContent()).toMatch(hint);
  });
});
