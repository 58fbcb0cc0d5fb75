import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/database.js';
import { seriousAxeViolations } from './axe.js';
import type { Browser } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The locations page in Chromium against the whole service: a tree built, edited, moved
 * (a cycle refused with the API's explanation), renamed (the descendants counted before
 * confirming) and deleted (a 409 explained, then a delete done); the page, the search and
 * the selection kept in the URL across reload and Back; axe on every state visited, at
 * desktop and phone size. Screenshots go to test-results/screenshots/locations-*.png.
 */

describe('locations in the web app', { timeout: 90_000 }, () => {
  let site: WebSite;
  let database: TestDatabase;
  let browser: Browser;
  let page: Page;
  let base: string;
  let orgId: number;

  const panel = () => page.locator('.location-panel');
  const expectAccessible = async (state: string) => {
    await browser.screenshot(`locations-${state}`);
    expect(await seriousAxeViolations(page), `axe on ${state}`).toEqual([]);
  };
  const select = async (name: string) => {
    await page.locator('.tree-row').getByRole('link', { name, exact: true }).click();
    await expect.poll(() => panel().locator('h2').textContent()).toBe(name);
  };
  /** `where`: 'top', or the name of the location to put it under. */
  const create = async (name: string, key: string, where: string) => {
    await page.getByLabel('Name', { exact: true }).first().fill(name);
    await page.getByLabel('External key', { exact: true }).fill(key);
    await page.getByRole('radio', { name: where === 'top' ? 'At the top level' : `Under ${where}` }).check();
    await page.getByRole('button', { name: 'Create location' }).click();
    await expect.poll(() => panel().locator('h2').textContent()).toBe(name);
  };
  const idOf = async (key: string) =>
    (
      await database.db.pool.query<{ id: number }>(
        'SELECT id FROM locations WHERE org_id = $1 AND external_key = $2 AND deleted_at IS NULL',
        [orgId, key],
      )
    ).rows[0]!.id;

  beforeAll(async () => {
    site = await startWebSite({
      name: 'loc',
      signUp: { email: 'loc@example.test', organization_name: 'Depot' },
    });
    ({ database, browser, page, base } = site);
    orgId = site.session!.orgId;
  }, 120_000);

  afterAll(async () => {
    await site?.close();
  });

  it('builds a three-level tree: at the top level, then under the selected location', async () => {
    await page.goto(`${base}/locations`);
    await page.getByText('No locations yet').waitFor();
    await expectAccessible('empty');
    await create('Site', 'SITE', 'top');
    expect(new URL(page.url()).searchParams.get('selected')).toBe(String(await idOf('SITE')));
    // The page asks for a new selection's details twice, for its panel and for the form's
    // "Under …" choice. Those answers held (as on a slow network), the form must not offer
    // the previous selection meanwhile: it did, and the next location went under Site (with
    // TAGTRAIL_TEST_API_JITTER_MS=1500 this suite saw 'SiteBay' instead of 'SiteHallBay').
    // Every ask for the new location is held, not the second alone: which of the two comes
    // second is not fixed, and holding the panel's left this test waiting for the panel.
    const siteDetails = `/internal/locations/${await idOf('SITE')}`;
    const held: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const details = /\/internal\/locations\/\d+$/;
    await page.route(details, async (route) => {
      const url = new URL(route.request().url());
      if (route.request().method() === 'GET' && url.pathname !== siteDetails) {
        held.push(url.pathname);
        await released;
      }
      // Unrouted meanwhile, the request has gone on through the other handlers.
      await route.continue().catch(() => undefined);
    });
    await page.getByLabel('Name', { exact: true }).first().fill('Hall');
    await page.getByLabel('External key', { exact: true }).fill('HALL');
    await page.getByRole('radio', { name: /^Under / }).check();
    await page.getByRole('button', { name: 'Create location' }).click();
    await expect.poll(() => held.length).toBeGreaterThanOrEqual(2);
    expect(await page.getByRole('radio', { name: 'Under Site' }).count()).toBe(0);
    release();
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Hall');
    await page.getByRole('radio', { name: 'Under Hall' }).waitFor();
    await page.unroute(details);
    await create('Bay', 'BAY', 'Hall');
    await expect
      .poll(() => panel().getByRole('navigation', { name: 'Path' }).textContent())
      .toBe('SiteHallBay');
    // The new location's ancestors are opened to show it; a toggle closes and reopens a level.
    const site = page.getByRole('button', { name: 'Sub-locations of Site (1)' });
    await expect.poll(() => site.getAttribute('aria-expanded')).toBe('true');
    await page.locator('.tree-row').getByRole('link', { name: 'Bay', exact: true }).waitFor();
    await site.click();
    await expect.poll(() => page.locator('.tree-row').getByRole('link', { name: 'Hall' }).count()).toBe(0);
    await site.click();
    await page.getByRole('button', { name: 'Sub-locations of Hall (1)' }).click();
    await page.getByRole('button', { name: 'Sub-locations of Hall (1)' }).click();
    await page.locator('.tree-row').getByRole('link', { name: 'Bay', exact: true }).waitFor();
    await expectAccessible('tree');
  });

  it('edits name, description, active flag and validity; a window ending first shows the API message', async () => {
    await select('Bay');
    await panel().getByLabel('Name', { exact: true }).fill('Bay 1');
    await panel().getByLabel('Description').fill('loading bay');
    await panel().getByLabel('Active').uncheck();
    await panel().getByRole('button', { name: 'Save details' }).click();
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Bay 1');
    await expect.poll(() => panel().locator('.facts').textContent()).toContain('inactive');
    await expect.poll(() => panel().getByText('loading bay').first().isVisible()).toBe(true);

    await panel().getByLabel('Valid from').fill('2030-01-01T00:00');
    await panel().getByLabel('Valid to').fill('2029-01-01T00:00');
    await panel().getByRole('button', { name: 'Save details' }).click();
    // The API's message goes under the field it is about, which is marked invalid.
    const validTo = panel().getByLabel('Valid to');
    await expect.poll(() => validTo.getAttribute('aria-invalid')).toBe('true');
    expect(await panel().locator('.field-error').textContent()).toMatch(/valid_to/);
    expect(await panel().getByRole('alert').textContent()).toBe('Check the field marked above.');
    await expectAccessible('edit-refused');
  });

  it('moves: the location and its subtree are not offered as parent, a move under another parent works', async () => {
    await select('Site');
    const move = panel().locator('section', { has: page.getByRole('heading', { name: 'Move' }) });
    await move.getByLabel('Search locations').fill('S');
    const options = move.getByLabel(/^Location/).locator('option');
    await expect.poll(() => options.allTextContents()).toContain('Site (SITE) (this location itself)');
    const disabled = (text: string) => options.filter({ hasText: text }).first().isDisabled();
    expect(await disabled('Site (SITE) (this location itself)')).toBe(true);
    await move.getByLabel('Search locations').fill('BAY');
    await expect
      .poll(() => options.allTextContents())
      .toContain('Site › Hall › Bay 1 (BAY) (inside this location)');
    expect(await disabled('Bay 1 (BAY) (inside this location)')).toBe(true);
    await expectAccessible('move-subtree-disabled');

    await create('Yard', 'YARD', 'top');
    await select('Hall');
    const moveHall = panel().locator('section', { has: page.getByRole('heading', { name: 'Move' }) });
    await moveHall.getByLabel('Search locations').fill('YARD');
    await moveHall.getByLabel(/^Location/).selectOption({ label: 'Yard (YARD)' });
    await moveHall.getByRole('button', { name: 'Move under Yard (YARD)' }).click();
    await expect.poll(() => panel().getByRole('navigation', { name: 'Path' }).textContent()).toBe('YardHall');
  });

  it('renames a key after showing how many sub-locations are affected', async () => {
    await select('Yard');
    const rename = panel().locator('form', { has: page.getByRole('heading', { name: 'Rename key' }) });
    await rename.getByLabel('New external key').fill('YARD-2');
    await rename.getByRole('button', { name: 'Rename…' }).click();
    expect(await rename.locator('.confirm').textContent()).toContain('This affects 2 sub-locations below it');
    await expectAccessible('rename-confirm');
    await rename.getByRole('button', { name: 'Confirm rename' }).click();
    await expect.poll(() => panel().locator('.facts').textContent()).toContain('YARD-2');
  });

  it('explains why a location cannot be deleted, deletes a leaf, and links the assets placed there', async () => {
    const hall = await idOf('HALL');
    await database.db.pool.query(
      `WITH a AS (INSERT INTO assets (org_id, external_key, name) VALUES ($1, 'CRATE-1', 'Crate') RETURNING id)
       INSERT INTO asset_positions (org_id, asset_id, location_id) SELECT $1, id, $2 FROM a`,
      [orgId, hall],
    );
    await select('Yard');
    const remove = panel().locator('section', { has: page.getByRole('heading', { name: 'Delete' }) });
    await remove.getByRole('button', { name: 'Delete location…' }).click();
    await remove.getByRole('button', { name: 'Delete for good' }).click();
    const alert = remove.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'location YARD-2 has 1 child location(s); move or delete them first (no cascade)',
    );

    await page.goto(`${base}/locations?selected=${hall}`);
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Hall');
    // Loaded from the URL, the tree opens the ancestors to show the selected location in place.
    const inTree = page.locator('.tree-row').getByRole('link', { name: 'Hall', exact: true });
    await inTree.waitFor();
    expect(await inTree.getAttribute('aria-current')).toBe('true');
    // The tree's asset count leads to the assets there.
    await page.goto(`${base}/locations`);
    await page.getByRole('button', { name: /^Sub-locations of Yard/ }).click();
    await page.getByRole('link', { name: '1 asset at Hall' }).click();
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Hall');
    const crate = panel().getByRole('link', { name: 'Crate' });
    expect(await crate.getAttribute('href')).toMatch(/^\/assets\/\d+$/);
    await expectAccessible('assets-here');

    await page.goto(`${base}/locations?selected=${await idOf('BAY')}`);
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Bay 1');
    await panel().getByRole('button', { name: 'Delete location…' }).click();
    await panel().getByRole('button', { name: 'Delete for good' }).click();
    await page.waitForURL((url) => !url.searchParams.has('selected'));
    await expect.poll(() => panel().count()).toBe(0);
  });

  it('attaches and detaches a tag', async () => {
    await page.goto(`${base}/locations?selected=${await idOf('SITE')}`);
    const tags = panel().locator('section', { has: page.getByRole('heading', { name: 'Tags' }) });
    await tags.getByLabel('Tag type').selectOption('barcode');
    await tags.getByLabel('Tag value').fill('SITE-GATE');
    await tags.getByRole('button', { name: 'Attach tag' }).click();
    const detach = tags.getByRole('button', { name: 'Detach Barcode tag SITE-GATE' });
    await detach.waitFor();
    // A double click detaches once: Detach is disabled while its DELETE runs.
    const detaches: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === 'DELETE' && r.url().includes('/tags/')) detaches.push(r.url());
    };
    page.on('request', onRequest);
    await detach.dblclick();
    await tags.getByText('No tags').waitFor();
    page.off('request', onRequest);
    expect(detaches).toHaveLength(1);
    expect(await tags.getByRole('alert').count()).toBe(0);
  });

  it('after a detach, Detach stays disabled until the reload shows the tag gone', async () => {
    const id = await idOf('SITE');
    await page.goto(`${base}/locations?selected=${id}`);
    const tags = panel().locator('section', { has: page.getByRole('heading', { name: 'Tags' }) });
    await tags.getByLabel('Tag type').selectOption('barcode');
    await tags.getByLabel('Tag value').fill('SITE-HOLD');
    await tags.getByRole('button', { name: 'Attach tag' }).click();
    const detach = tags.getByRole('button', { name: 'Detach Barcode tag SITE-HOLD' });
    await detach.waitFor();
    await expect.poll(() => detach.isEnabled()).toBe(true);
    // The reload the detach asks for is held: the page still shows the tag meanwhile.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const details = new RegExp(`/internal/locations/${id}$`);
    await page.route(details, async (route) => {
      await held;
      await route.continue().catch(() => undefined);
    });
    const deleted = page.waitForResponse(
      (r) => r.request().method() === 'DELETE' && r.url().includes('/tags/'),
    );
    await detach.click();
    expect((await deleted).status()).toBe(204);
    await expect.poll(() => detach.isDisabled()).toBe(true);
    release();
    await tags.getByText('No tags').waitFor();
    await page.unroute(details);
    expect(await tags.getByRole('alert').count()).toBe(0);
  });

  it('the Details form keeps what was typed while the location changes, and says when someone else changed a field', async () => {
    const id = await idOf('SITE');
    await page.goto(`${base}/locations?selected=${id}`);
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Site');
    const details = panel().locator('form', {
      has: page.getByRole('heading', { name: 'Details', exact: true }),
    });
    const name = details.getByLabel('Name', { exact: true });
    const description = details.getByLabel('Description');
    await description.fill('main gate');
    // A tag attached in the panel changes the location (its updated_at), no field of the form:
    // the draft stays (the form was keyed by updated_at and lost it), and it saves.
    const tags = panel().locator('section', { has: page.getByRole('heading', { name: 'Tags' }) });
    await tags.getByLabel('Tag type').selectOption('barcode');
    await tags.getByLabel('Tag value').fill('SITE-DOOR');
    await tags.getByRole('button', { name: 'Attach tag' }).click();
    await tags.getByRole('button', { name: 'Detach Barcode tag SITE-DOOR' }).waitFor();
    expect(await description.inputValue()).toBe('main gate');
    await details.getByRole('button', { name: 'Save details' }).click();
    await expect.poll(() => panel().locator('p', { hasText: 'main gate' }).count()).toBe(1);

    // Someone else changes the description while the name is being edited here: the panel
    // follows the live stream, the name typed stays, and the form says why it cannot save.
    await name.fill('Main site');
    const current = (await site.internal('GET', `/internal/locations/${id}`)).body.data;
    const patched = await site.internal('PATCH', `/internal/locations/${id}`, {
      description: 'north gate',
      updated_at: current.updated_at,
    });
    expect(patched.status).toBe(200);
    const notice = details.getByRole('alert').filter({ hasText: 'changed by someone else' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('(description)');
    expect(await name.inputValue()).toBe('Main site');
    expect(await description.inputValue()).toBe('main gate');
    expect(await details.getByRole('button', { name: 'Save details' }).isDisabled()).toBe(true);
    await expectAccessible('details-conflict');

    await notice.getByRole('button', { name: 'Load the new version' }).click();
    await expect.poll(() => description.inputValue()).toBe('north gate');
    expect(await name.inputValue()).toBe('Site');
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe(`edit-${id}-name`);
    expect(await details.getByRole('alert').count()).toBe(0);
    expect(await details.getByRole('button', { name: 'Save details' }).isDisabled()).toBe(false);
  });

  it('keeps page, search and selection in the URL: reload and Back return to the same rows', async () => {
    await database.db.pool.query(
      `INSERT INTO locations (org_id, external_key, name)
       SELECT $1, 'ROOM-' || lpad(n::text, 3, '0'), 'Room ' || lpad(n::text, 3, '0') FROM generate_series(1, 60) n`,
      [orgId],
    );
    await page.goto(`${base}/locations`);
    const status = page.locator('.pager-status').first();
    await expect.poll(() => status.textContent()).toBe('1–50 of 62');
    await page.getByRole('button', { name: 'Next' }).first().click();
    await expect.poll(() => status.textContent()).toBe('51–62 of 62');
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await page.reload();
    await expect.poll(() => status.textContent()).toBe('51–62 of 62');
    await page.goBack();
    await expect.poll(() => status.textContent()).toBe('1–50 of 62');

    await page.locator('#location-search').fill('room 05');
    await page.waitForURL((url) => url.searchParams.get('q') === 'room 05');
    await expect.poll(() => page.locator('.search-hits .tree-node').count()).toBe(10);
    await page.locator('.search-hits').getByRole('link', { name: 'Room 057' }).click();
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Room 057');
    await expectAccessible('search-selected');
    await page.reload();
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Room 057');
    expect(await page.locator('#location-search').inputValue()).toBe('room 05');
    await page.goBack();
    await expect.poll(() => panel().count()).toBe(0);
    expect(await page.locator('#location-search').inputValue()).toBe('room 05');
    await expect.poll(() => page.locator('.search-hits .tree-node').count()).toBe(10);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/locations?q=hall`);
    await page.locator('.search-hits').getByText('in Yard').waitFor();
    await expectAccessible('phone-search');
    await page.locator('.search-hits').getByRole('link', { name: 'Hall', exact: true }).click();
    await expect.poll(() => panel().locator('h2').textContent()).toBe('Hall');
    // Below the tree on a phone: the panel's heading takes focus and so comes into view.
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('location-title');
    await expectAccessible('phone-panel');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(browser.consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
    expect(browser.foreignRequests).toEqual([]);
  });
});
