import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * The handheld page's "Scanned values are" choice applies to the scans after it: an item
 * scanned as a tag stays a tag when the choice switches to asset keys. The page used to send
 * every item with the kind chosen at submit time, so the earlier tag went out as an asset
 * key and came back unknown.
 */
describe.skipIf(!hasChromium)(
  'handheld items keep the kind they were scanned as',
  { timeout: 120_000 },
  () => {
    let site: WebSite;

    beforeAll(async () => {
      site = await startWebSite({
        name: 'handheld-kinds',
        signUp: { email: 'kinds@example.test', organization_name: 'Depot' },
      });
      const shelf = await site.internal('POST', '/internal/locations', {
        name: 'Shelf B',
        external_key: 'SHELF-B',
      });
      expect(shelf.status, JSON.stringify(shelf.body)).toBe(201);
      const tagged = await site.internal('POST', '/internal/assets', {
        name: 'Drill',
        external_key: 'DRILL-1',
        tags: [{ tag_type: 'barcode', value: 'TAG-DRILL' }],
      });
      expect(tagged.status, JSON.stringify(tagged.body)).toBe(201);
      const keyed = await site.internal('POST', '/internal/assets', {
        name: 'Ladder',
        external_key: 'LADDER-1',
      });
      expect(keyed.status, JSON.stringify(keyed.body)).toBe(201);
    }, 120_000);
    afterAll(() => site?.close());

    it('a tag scanned before switching to asset keys is still sent as a tag', async () => {
      const page = site.page;
      await page.goto(`${site.base}/handheld`);
      const location = page.getByLabel("Scan or type the location's barcode");
      await location.fill('SHELF-B');
      await location.press('Enter');
      await page.getByText('Shelf B (SHELF-B)').waitFor();

      const tagField = page.getByLabel('Scan or type a tag');
      await tagField.fill('TAG-DRILL');
      await tagField.press('Enter');
      await page.getByRole('radio', { name: 'Asset keys' }).check();
      const keyField = page.getByLabel('Scan or type an asset key');
      await keyField.fill('LADDER-1');
      await keyField.press('Enter');
      const scanned = page.getByRole('list', { name: 'Scanned items' }).getByRole('listitem');
      await expect
        .poll(() => scanned.allTextContents())
        .toEqual(['TAG-DRILLtagRemove', 'LADDER-1asset keyRemove']);

      await page.getByRole('button', { name: 'Submit 2 items' }).click();
      const result = page.getByRole('status').filter({ hasText: 'applied' });
      await result.waitFor();
      expect(await result.textContent()).toContain('2 applied, 0 unknown');
      await expect.poll(() => scanned.count()).toBe(0);
    });
  },
);
