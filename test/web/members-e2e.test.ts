import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { type Browser, hasChromium, launch } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * A second person in the web app, in Debian's Chromium against the whole service: the
 * admin invites Bea as a viewer and copies the link; Bea accepts it in a browser of her own
 * and sees what a viewer may (no write controls, admin pages refused); the admin makes her
 * an editor and she adds an asset; removing her ends her session at once, and her open page
 * goes to sign-in by itself (its live stream ended). axe runs on each page a person sees here.
 */
describe.skipIf(!hasChromium)('members, invitations and roles in the web app', { timeout: 120_000 }, () => {
  let site: WebSite;
  let admin: Page;
  let bea: Browser;
  let link = '';

  const noSeriousAxe = async (page: Page, what: string) => {
    expect(await seriousAxeViolations(page), what).toEqual([]);
  };
  const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  const openAccountMenu = (page: Page) => page.locator('.account-toggle').click();

  beforeAll(async () => {
    site = await startWebSite({
      name: 'members',
      signUp: { email: 'ada@example.test', organization_name: 'Depot' },
      // Inviting Bea a second time is refused (409), on purpose.
      expectedFailures: ['/internal/invitations'],
    });
    admin = site.page;
    const created = await site.internal('POST', '/internal/assets', {
      name: 'Pallet jack',
      external_key: 'PJ-1',
    });
    expect(created.status).toBe(201);
    // Bea's own browser: signed out at first, so the session probe's 401 is expected, and
    // after her removal her next call's 401 too.
    // Her live stream's reconnection, if it comes before the app has left the page, meets one too.
    bea = await launch(site.base, ['/internal/session', '/internal/assets', '/internal/live']);
  }, 120_000);

  afterAll(async () => {
    await bea?.close();
    await site?.close();
  });

  it('the admin invites Bea as a viewer and copies the link, shown once', async () => {
    await admin.goto(`${site.base}/locations`);
    await openAccountMenu(admin);
    await admin.getByRole('link', { name: 'Members' }).click();
    await admin.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await admin.getByRole('row', { name: /ada@example\.test \(you\)/ }).waitFor();
    await noSeriousAxe(admin, 'members page');

    await admin.getByLabel('Email').fill('bea@example.test');
    await admin.getByRole('radio', { name: /^Viewer/ }).check();
    await admin.getByRole('button', { name: 'Create invitation link' }).click();
    await admin.getByRole('heading', { name: 'Invitation link for bea@example.test' }).waitFor();
    link = await admin.getByLabel('Invitation link', { exact: true }).inputValue();
    expect(link).toMatch(new RegExp(`^${site.base}/invitation#[A-Za-z0-9_-]{43}$`));
    await admin.getByRole('button', { name: 'Copy' }).click();
    await admin.getByText('Copied to the clipboard.').waitFor();
    await site.browser.screenshot('members-invitation-link');
    await noSeriousAxe(admin, 'invitation link shown');
    await admin.getByRole('button', { name: 'Done' }).click();
    const row = admin.getByRole('row', { name: /bea@example\.test/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('pending');
  });

  it("a refused invitation's message goes once the email is retyped", async () => {
    const email = admin.getByLabel('Email');
    await email.fill('bea@example.test');
    await admin.getByRole('button', { name: 'Create invitation link' }).click();
    const alert = admin.getByRole('alert').filter({ hasText: 'bea@example.test' });
    await alert.waitFor();
    await email.press('End');
    await email.press('Backspace');
    await alert.waitFor({ state: 'detached' });
    await email.fill('');
  });

  it('Bea accepts the link and, as a viewer, sees everything but is offered no change', async () => {
    const page = bea.page;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Accept the invitation' }).waitFor();
    // The heading renders before the invitation's lookup answers; its text follows.
    await page.getByText('You are invited to').waitFor();
    const invite = await page.locator('main').textContent();
    expect(invite).toContain('Depot');
    expect(invite).toContain('viewer');
    expect(invite).toContain('bea@example.test');
    await noSeriousAxe(page, 'invitation page');
    await bea.screenshot('members-accept');
    await page.getByLabel('Choose a password').fill('bea has a good password');
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.waitForURL(/\/locations$/);

    // The navigation offers what a viewer may use: no handheld, the import page as Export.
    const nav = mainNav(page);
    // Export (the viewer's name for the import page) proves the nav was drawn for her role.
    await nav.getByRole('link', { name: 'Export' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Handheld' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Import' }).count()).toBe(0);
    await openAccountMenu(page);
    expect(await page.locator('#account-panel').textContent()).toContain('Your role: viewer');
    expect(await page.getByRole('link', { name: 'Members' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'API keys' }).count()).toBe(0);

    await nav.getByRole('link', { name: 'Assets' }).click();
    await page.getByRole('link', { name: 'Pallet jack' }).waitFor();
    expect(await page.getByRole('link', { name: 'New asset' }).count()).toBe(0);
    await noSeriousAxe(page, 'assets as a viewer');
    await page.getByRole('link', { name: 'Pallet jack' }).click();
    await page.getByRole('heading', { name: 'Pallet jack', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Tags' }).waitFor();
    for (const name of ['Edit details', 'Delete asset', 'Attach tag']) {
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    }
    await bea.screenshot('members-viewer-asset');
    await noSeriousAxe(page, 'asset page as a viewer');

    await nav.getByRole('link', { name: 'Export' }).click();
    await page.getByRole('heading', { name: 'Export', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Export assets' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Import assets' }).count()).toBe(0);

    // Pages reached by URL say why they are not offered.
    for (const path of ['/members', '/handheld', '/keys', '/assets/new']) {
      await page.goto(`${site.base}${path}`);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    }
    expect(await page.locator('main').textContent()).toContain('you are a viewer');
    await noSeriousAxe(page, 'not allowed page');
  });

  it('made an editor, Bea may add assets and submit handheld lists, still not administer', async () => {
    await admin.goto(`${site.base}/members`);
    const role = admin.getByLabel('Role of bea@example.test');
    const changed = admin.waitForResponse(
      (r) => r.url().endsWith('/role') && r.request().method() === 'POST',
    );
    await role.selectOption('editor');
    // The choice shows at once and holds while the change is saved (the select no longer
    // flips back to "viewer" on the re-render the request causes; TAGTRAIL_TEST_API_DELAY_MS
    // holds the answer long enough to see it), and the select takes no second change meanwhile.
    expect(await role.inputValue()).toBe('editor');
    expect((await changed).status()).toBe(200);

    const page = bea.page;
    await page.goto(`${site.base}/assets`);
    const nav = mainNav(page);
    await nav.getByRole('link', { name: 'Handheld' }).waitFor();
    await nav.getByRole('link', { name: 'Import' }).waitFor();
    await page.getByRole('link', { name: 'New asset' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Hand truck');
    await page.getByRole('button', { name: 'Create asset' }).click();
    await page.getByRole('heading', { name: 'Hand truck', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Edit details' }).waitFor();
    await noSeriousAxe(page, 'asset page as an editor');
    await bea.screenshot('members-editor-asset');

    await nav.getByRole('link', { name: 'Handheld' }).click();
    // The page itself first: counted before it renders, "Not allowed" would be absent anyway.
    await page.getByRole('heading', { name: 'Handheld inventory' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Not allowed' }).count()).toBe(0);
    await page.goto(`${site.base}/keys`);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('you are an editor');
  });

  it('a role chosen with the arrow keys keeps the focus on its select', async () => {
    await admin.goto(`${site.base}/members`);
    const role = admin.getByLabel('Role of bea@example.test');
    await role.waitFor();
    // Cy joins behind the page's back: the People list shows him only once it has reloaded
    // after the change below, which is when the row used to be remounted.
    const invited = await site.internal('POST', '/internal/invitations', {
      email: 'cy@example.test',
      role: 'viewer',
    });
    expect(invited.status).toBe(201);
    const accepted = await fetch(`${site.base}/internal/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: invited.body.token, password: 'correct horse battery staple' }),
    });
    expect(accepted.status).toBe(201);

    const isFocused = () => role.evaluate((select) => select === document.activeElement);
    await role.focus();
    // Editor, one up: viewer. The row was keyed by the role, and remounted with the focus in it.
    await admin.keyboard.press('ArrowUp');
    await admin.getByRole('row', { name: /cy@example\.test/ }).waitFor();
    expect(await role.inputValue()).toBe('viewer');
    expect(await isFocused()).toBe(true);
    // And back, still from the keyboard.
    await admin.keyboard.press('ArrowDown');
    await expect
      .poll(
        async () =>
          (await site.internal('GET', '/internal/members')).body.data.find(
            (m: { email: string }) => m.email === 'bea@example.test',
          )?.role,
      )
      .toBe('editor');
    await noSeriousAxe(admin, 'members after a role change');
  });

  it('removing Bea ends her session at once: her open page lands on sign-in without a click', async () => {
    // Bea looks at the assets, a live view: its stream open, and nothing else to fetch.
    const page = bea.page;
    const stream = page.waitForResponse((r) => r.url().endsWith('/internal/live'));
    await page.goto(`${site.base}/assets`);
    await page.getByRole('link', { name: 'Pallet jack' }).waitFor();
    expect((await stream).status()).toBe(200);

    await admin.goto(`${site.base}/members`);
    await admin.getByRole('button', { name: 'Remove bea@example.test' }).click();
    const removed = admin.waitForResponse(
      (r) => r.url().includes('/internal/members/') && r.request().method() === 'DELETE',
    );
    await admin.getByRole('button', { name: 'Yes, remove' }).click();
    expect((await removed).status()).toBe(204);
    await expect.poll(() => admin.getByRole('row', { name: /bea@example\.test/ }).count()).toBe(0);

    // The service ends her stream; the app asks the session probe, hears 401, signs her out.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/assets');
    await page.goto(`${site.base}/locations`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('made no request outside the service and logged no unexpected error', () => {
    for (const b of [site.browser, bea]) {
      expect(b.foreignRequests).toEqual([]);
      expect(b.consoleErrors).toEqual([]);
    }
  });
});
