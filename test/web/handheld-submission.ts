import { expect } from 'vitest';
import type { Browser } from './browser.js';

/**
 * The handheld step of e2e.test.ts, in a page of its own on a phone-sized screen: a location
 * scanned, typed or picked (out-of-order lookups included), tags scanned, one removed, and the
 * submission applied while one more tag is scanned meanwhile. Expects the master data that
 * e2e.test.ts writes through the API before it (Shelf A with the label LBL-SHELF-A, Dock 1,
 * the warehouse WH-1, an asset tagged TAG-0001): the asset ends up on Shelf A.
 */
export async function handheldSubmissionOnPhone(browser: Browser, base: string): Promise<void> {
  const phone = await browser.context.newPage();
  await phone.setViewportSize({ width: 375, height: 812 });
  await phone.goto(`${base}/handheld`);
  await phone.getByRole('heading', { name: 'Handheld inventory' }).waitFor();

  // Keyboard-wedge scanners type the code and press Enter: a location's key is matched
  // at once; anything else is taken as a location tag, resolved when submitted.
  const location = phone.getByLabel("Scan or type the location's barcode");
  await location.fill('SHELF-A');
  await location.press('Enter');
  await phone.getByText('Shelf A (SHELF-A)').waitFor();
  // Or picked from a search.
  await phone.getByRole('button', { name: 'Change' }).click();
  await phone.getByRole('button', { name: 'Or choose from a list' }).click();
  await phone.getByLabel('Search locations').fill('dock');
  const pick = phone.getByLabel(/^Location/);
  await expect
    .poll(() => pick.locator('option').allTextContents())
    .toContain('Main warehouse › Dock 1 (DOCK-1)');
  await pick.selectOption({ label: 'Main warehouse › Dock 1 (DOCK-1)' });
  await phone.getByText('Dock 1 (DOCK-1)').first().waitFor();
  // Two scans in a row whose lookups answer out of order (the first one held): the later
  // scan chooses the location, the earlier answer arriving last does not take it back.
  let releaseLookup!: () => void;
  const lookupHeld = new Promise<void>((resolve) => {
    releaseLookup = resolve;
  });
  const firstLookup = (url: URL) =>
    url.pathname === '/internal/locations' && url.searchParams.get('q') === 'WH-1';
  await phone.route(firstLookup, async (route) => {
    await lookupHeld;
    await route.continue();
  });
  await location.fill('WH-1');
  await location.press('Enter');
  await location.fill('LBL-SHELF-A');
  await location.press('Enter');
  await phone.getByText('location tag “LBL-SHELF-A”').waitFor();
  const lateAnswer = phone.waitForEvent('requestfinished', (r) => firstLookup(new URL(r.url())));
  releaseLookup();
  await lateAnswer;
  await phone.unroute(firstLookup);
  // The page has handled the late answer once a task after it has run.
  await phone.evaluate('new Promise((resolve) => setTimeout(resolve, 0))');
  expect(await phone.locator('.chosen').textContent()).toContain('location tag “LBL-SHELF-A”');
  const item = phone.getByLabel('Scan or type a tag');
  await expect
    .poll(() => phone.evaluate('document.activeElement && document.activeElement.id'))
    .toBe('hh-item');
  for (const value of ['TAG-0001', 'NOT-A-TAG', 'TYPO-123']) {
    await item.fill(value);
    await item.press('Enter');
  }
  await phone.getByRole('button', { name: 'Remove tag TYPO-123' }).click();
  const scanned = phone.getByRole('list', { name: 'Scanned items' }).getByRole('listitem');
  await expect.poll(() => scanned.allTextContents()).toEqual(['TAG-0001tagRemove', 'NOT-A-TAGtagRemove']);
  // Nothing sticks out of a 375px screen.
  expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  await browser.screenshot('handheld-375', phone, { fullPage: false });
  // The submission is held until one more tag has been scanned meanwhile: that scan is not
  // part of it and must stay listed when the answer comes (it used to be dropped with the
  // submitted ones, a scan lost whenever the network was slower than the scanner).
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await phone.route('**/internal/handheld', async (route) => {
    await held;
    await route.continue();
  });
  await phone.getByRole('button', { name: 'Submit 2 items' }).click();
  await phone.getByRole('button', { name: 'Submitting…' }).waitFor();
  await item.fill('LATE-1');
  await item.press('Enter');
  await expect.poll(() => scanned.allTextContents()).toContain('LATE-1tagRemove');
  release();
  const result = phone.getByRole('status').filter({ hasText: 'applied' });
  await result.waitFor();
  await phone.unroute('**/internal/handheld');
  expect(await result.textContent()).toContain('1 applied, 1 unknown');
  // The unknown item is named, and stays in the list (marked) to be checked or removed.
  expect(await result.textContent()).toContain('Unknown (kept in the list): NOT-A-TAG');
  await expect
    .poll(() => scanned.allTextContents())
    .toEqual(['NOT-A-TAGtagunknownRemove', 'LATE-1tagRemove']);
  await phone.getByRole('button', { name: 'Submit 2 items' }).waitFor();
  await browser.screenshot('handheld-submitted-375', phone, { fullPage: false });
  await phone.close();
}
