import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/database.js';
import { seriousAxeViolations } from './axe.js';
import type { Browser } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * Every list keeps its state in the query string (page, sort, search): reload and Back
 * return to the same rows, and a link to the URL shows them. The assets table's sort
 * controls pass axe, label-content-name-mismatch included (issue 10's finding).
 */
describe('list state in the URL', { timeout: 90_000 }, () => {
  let site: WebSite;
  let database: TestDatabase;
  let browser: Browser;
  let page: Page;
  let base: string;

  const firstCells = (table = page.locator('table').first()) =>
    table.locator('tbody tr th[scope="row"]').allTextContents();
  const status = () => page.locator('.pager-status').first().textContent();
  const param = (name: string) => new URL(page.url()).searchParams.get(name);

  // What the page asked of /internal/assets and what came back, for a failure's message:
  // this test once failed twice in CI with the pager stuck, and nothing said why.
  const listLog: string[] = [];
  const explained = async (fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      const why = (err as Error).message;
      throw new Error(
        `${why}\n/internal/assets: ${listLog.join('; ')}\nconsole: ${browser.consoleErrors.join('; ')}`,
        { cause: err },
      );
    }
  };

  beforeAll(async () => {
    site = await startWebSite({
      name: 'lists',
      signUp: { email: 'lists@example.test', organization_name: 'Lists' },
    });
    ({ database, browser, page, base } = site);
    const listed = (url: string) => new URL(url).pathname === '/internal/assets';
    page.on('response', (r) => {
      if (listed(r.url())) listLog.push(`${r.status()} ${new URL(r.url()).search}`);
    });
    page.on('requestfailed', (r) => {
      if (listed(r.url())) listLog.push(`failed (${r.failure()?.errorText}) ${new URL(r.url()).search}`);
    });
    const { orgId } = site.session!;

    // 30 assets A-01..A-30 at two locations, seen at increasing times; 22 API keys.
    const pool = database.db.pool;
    const dock = (
      await pool.query<{ id: number }>(
        `INSERT INTO locations (org_id, external_key, name) VALUES ($1, 'DOCK', 'Dock') RETURNING id`,
        [orgId],
      )
    ).rows[0]!.id;
    await pool.query(
      `WITH a AS (
         INSERT INTO assets (org_id, external_key, name)
         SELECT $1, 'A-' || lpad(n::text, 2, '0'), 'Asset ' || lpad((31 - n)::text, 2, '0')
         FROM generate_series(1, 30) n RETURNING id, external_key)
       INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at)
       SELECT $1, id, $2, timestamptz '2025-01-01' + substr(external_key, 3)::int * interval '1 hour' FROM a`,
      [orgId, dock],
    );
    for (let i = 1; i <= 22; i++) {
      const minted = await site.internal('POST', '/internal/keys', {
        name: `key ${String(i).padStart(2, '0')}`,
        scopes: [],
        expires_at: null,
      });
      expect(minted.status).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('assets: sort, page and search survive reload and Back; the sort controls pass axe', () =>
    explained(assetsListState));

  async function assetsListState() {
    await page.goto(`${base}/assets`);
    await expect.poll(status).toBe('1–25 of 30');
    // Default order: by name (Asset 01 is A-30).
    expect((await firstCells()).slice(0, 2)).toEqual(['A-30', 'A-29']);
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Last seen', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === 'last_seen_at');
    await expect.poll(async () => (await firstCells())[0]).toBe('A-01');
    await page.getByRole('button', { name: 'Last seen', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === '-last_seen_at');
    await expect.poll(async () => (await firstCells())[0]).toBe('A-30');
    expect(await page.getByRole('columnheader', { name: 'Last seen' }).getAttribute('aria-sort')).toBe(
      'descending',
    );
    // A refresh of the page shown (the live stream's, after an edit elsewhere) leaves Previous
    // and Next working: one that disabled them swallowed a click landing as it started (CI
    // saw the stream's first refresh eat a click on Next).
    let releaseRefresh!: () => void;
    const refreshHeld = new Promise<void>((resolve) => {
      releaseRefresh = resolve;
    });
    let refreshing = false;
    let refreshed = false;
    const thisPage = (url: URL) =>
      url.pathname === '/internal/assets' && url.searchParams.get('offset') === '0';
    await page.route(thisPage, async (route) => {
      refreshing = true;
      await refreshHeld;
      await route.continue();
      refreshed = true;
    });
    const edited = (
      await database.db.pool.query<{ id: string }>(
        `SELECT id FROM assets WHERE org_id = $1 AND external_key = 'A-10'`,
        [site.session!.orgId],
      )
    ).rows[0]!.id;
    const patched = await site.internal('PATCH', `/internal/assets/${edited}`, { description: 'moved' });
    expect(patched.status).toBe(200);
    await expect.poll(() => refreshing).toBe(true);
    expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(false);
    releaseRefresh();
    await expect.poll(() => refreshed).toBe(true);
    await page.unroute(thisPage);

    // The next page's answer held: meanwhile the status numbers the rows still shown (it
    // used to say "26–50 of 30", the new page's offset with the old page's rows).
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const nextPage = (url: URL) =>
      url.pathname === '/internal/assets' && url.searchParams.get('offset') === '25';
    await page.route(nextPage, async (route) => {
      await held;
      await route.continue();
    });
    const next = page.getByRole('button', { name: 'Next' });
    await next.click();
    // Disabled while the page loads: the click has been rendered.
    await expect.poll(() => next.isDisabled()).toBe(true);
    expect(await status()).toBe('1–25 of 30');
    release();
    await expect.poll(status).toBe('26–30 of 30');
    await page.unroute(nextPage);
    expect(param('page')).toBe('2');
    await browser.screenshot('lists-assets-sorted-page-2');
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.reload();
    await expect.poll(status).toBe('26–30 of 30');
    expect(await firstCells()).toEqual(['A-05', 'A-04', 'A-03', 'A-02', 'A-01']);
    await page.goBack();
    await expect.poll(status).toBe('1–25 of 30');
    expect((await firstCells())[0]).toBe('A-30');
    expect(param('sort')).toBe('-last_seen_at');
    await page.goBack();
    await expect.poll(async () => (await firstCells())[0]).toBe('A-01');
    expect(param('sort')).toBe('last_seen_at');

    await page.getByLabel('Search assets').fill('asset 1');
    await page.waitForURL((url) => url.searchParams.get('q') === 'asset 1');
    await expect.poll(status).toBe('1–10 of 10');
    expect(param('sort')).toBe('last_seen_at');
    await page.reload();
    await expect.poll(status).toBe('1–10 of 10');
    expect(await page.getByLabel('Search assets').inputValue()).toBe('asset 1');

    // A shared link shows the same rows.
    await page.goto(`${base}/assets?sort=-external_key&page=2`);
    await expect.poll(status).toBe('26–30 of 30');
    expect((await firstCells())[0]).toBe('A-05');
  }

  it('keys: the page survives reload and Back', async () => {
    await page.goto(`${base}/keys`);
    await expect.poll(status).toBe('1–20 of 22');
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(status).toBe('21–22 of 22');
    expect(param('page')).toBe('2');
    await page.reload();
    await expect.poll(status).toBe('21–22 of 22');
    await page.goBack();
    await expect.poll(status).toBe('1–20 of 22');
  });

  it('report: the search survives reload', async () => {
    await page.goto(`${base}/report?q=A-1`);
    await expect.poll(status).toBe('1–10 of 10');
    expect(await page.getByLabel('Filter').inputValue()).toBe('A-1');
    await page.reload();
    await expect.poll(status).toBe('1–10 of 10');
    expect(browser.consoleErrors).toEqual([]);
    expect(browser.foreignRequests).toEqual([]);
  });
});
