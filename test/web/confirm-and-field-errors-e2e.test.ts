import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from './axe.js';
import { hasChromium } from './browser.js';
import { startWebSite, type WebSite } from './site.js';

/**
 * What a browser audit left: a webhook's Delete asked nothing and, done, left the focus on
 * the page body; a reader form's refused MQTT topic showed in an alert, not under the
 * field; a refused field's message stayed while the person retyped the field (the invite
 * form, and every form with field messages); and an invitation's Resend voided the link
 * sent before without asking.
 */

/** The id of the element with the focus, or null while only the page body has it. */
const focusedId = (page: Page) =>
  page.evaluate(() => (document.activeElement === document.body ? null : (document.activeElement?.id ?? '')));

const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent ?? null);

/** Presses Enter on `name`'s button, as a keyboard user does. */
async function pressButton(page: Page, name: string | RegExp) {
  await page.getByRole('button', { name }).focus();
  await page.keyboard.press('Enter');
}

/** The question asked in place of a button has the focus (on its Cancel, in an effect after it renders). */
async function questionAsked(page: Page) {
  await expect.poll(() => focusedText(page)).toBe('Cancel');
}

/** The field's message under it: the input marked invalid and described by it. */
async function expectFieldError(page: Page, inputId: string, message: RegExp) {
  const error = page.locator(`#${inputId}-error`);
  await error.waitFor();
  expect(await error.textContent()).toMatch(message);
  const input = page.locator(`#${inputId}`);
  expect(await input.getAttribute('aria-invalid')).toBe('true');
  expect((await input.getAttribute('aria-describedby'))?.split(' ')).toContain(`${inputId}-error`);
}

/** No message under the field any more, and the input no longer marked. */
async function expectNoFieldError(page: Page, inputId: string) {
  await page.locator(`#${inputId}-error`).waitFor({ state: 'detached' });
  const input = page.locator(`#${inputId}`);
  expect(await input.getAttribute('aria-invalid')).toBeNull();
  expect((await input.getAttribute('aria-describedby')) ?? '').not.toContain(`${inputId}-error`);
}

describe.skipIf(!hasChromium)(
  'questions, focus and field errors the audit left',
  { timeout: 120_000 },
  () => {
    let site: WebSite;
    let page: Page;

    beforeAll(async () => {
      site = await startWebSite({
        name: 'confirm-field-errors',
        // The refusals caused on purpose below.
        expectedFailures: ['/internal/readers', '/internal/invitations', '/internal/locations'],
        signUp: { email: 'ines@example.test', organization_name: 'Depot' },
      });
      page = site.page;
    }, 120_000);
    afterAll(() => site?.close());

    it("a webhook's Delete asks first, then leaves the focus on the Endpoints heading", async () => {
      const urls = ['https://erp.example.test/one', 'https://erp.example.test/two'];
      for (const url of urls) {
        const made = await site.internal('POST', '/internal/webhooks', { url, event_types: ['asset.moved'] });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
      }
      await page.goto(`${site.base}/webhooks`);
      const first = page.getByRole('article', { name: urls[0] });
      await first.waitFor();

      await pressButton(page, `Delete ${urls[0]}`);
      await questionAsked(page);
      const question = page.getByRole('group', {
        name: /^Delete the endpoint https:\/\/erp\.example\.test\/one\?/,
      });
      await question.waitFor();
      expect(await seriousAxeViolations(page), 'webhook delete asked').toEqual([]);
      // Cancel deletes nothing and gives the focus back to Delete.
      await pressButton(page, 'Cancel');
      await expect.poll(() => focusedText(page)).toBe('Delete');
      expect((await site.internal('GET', '/internal/webhooks')).body.data).toHaveLength(2);

      await pressButton(page, `Delete ${urls[0]}`);
      await questionAsked(page);
      await pressButton(page, 'Yes, delete');
      await first.waitFor({ state: 'detached' });
      await page.getByRole('article', { name: urls[1] }).waitFor();
      await expect.poll(() => focusedId(page)).toBe('endpoints-title');
      expect(
        (await site.internal('GET', '/internal/webhooks')).body.data.map((e: { url: string }) => e.url),
      ).toEqual([urls[1]]);
      expect(await seriousAxeViolations(page), 'webhooks after a delete').toEqual([]);
      expect(site.browser.consoleErrors).toEqual([]);
    });

    it("a reader's refused topic is said under the topic field, in the new and the edit form", async () => {
      const reader = await site.internal('POST', '/internal/readers', {
        name: 'Gate',
        family: 'generic-json',
        identity: 'gate-1',
        topic: 'depot/gate-1',
        webhook: false,
      });
      expect(reader.status, JSON.stringify(reader.body)).toBe(201);
      const readerId = reader.body.data.id;
      await page.goto(`${site.base}/readers`);

      await page.locator('#reader-name').fill('Dock');
      await page.locator('#reader-identity').fill('dock-1');
      await page.locator('#reader-topic').fill('depot/+/reads');
      await page.getByRole('button', { name: 'Add reader' }).click();
      await expectFieldError(page, 'reader-topic', /\+/);
      // The hint still describes it too.
      expect((await page.locator('#reader-topic').getAttribute('aria-describedby'))?.split(' ')).toContain(
        'reader-topic-hint',
      );
      const form = page.getByRole('form', { name: 'Add a reader' });
      // The alert points at the field instead of repeating the message with the API's field name.
      expect(await form.getByRole('alert').textContent()).toBe('Check the field marked above.');
      expect(await seriousAxeViolations(page), 'reader topic refused').toEqual([]);
      // Retyped, the message goes (it was about the topic sent).
      await page.locator('#reader-topic').fill('depot/dock-1/reads');
      await expectNoFieldError(page, 'reader-topic');
      expect(await form.getByRole('alert').count()).toBe(0);

      const card = page.getByRole('article', { name: 'Gate' });
      await card.getByRole('button', { name: 'Edit reader Gate' }).click();
      const topic = `reader-${readerId}-edit-topic`;
      await page.locator(`#${topic}`).fill('depot/#');
      await card.getByRole('button', { name: 'Save reader' }).click();
      await expectFieldError(page, topic, /#/);
      expect(await seriousAxeViolations(page), 'reader edit topic refused').toEqual([]);
      await page.locator(`#${topic}`).fill('depot/gate-2');
      await expectNoFieldError(page, topic);
      // The edit's refusal, caused above at a path known only now; nothing else.
      const errors = site.browser.consoleErrors.splice(0);
      expect(errors.filter((e) => !e.includes(`/internal/readers/${readerId})`))).toEqual([]);
    });

    it("a refused invitation's email message goes once the address is retyped", async () => {
      await page.goto(`${site.base}/members`);
      const email = page.locator('#invite-email');
      // An address the browser's own check lets through and the API refuses (over 254 characters).
      await email.fill(`${'a'.repeat(250)}@example.test`);
      await page.getByRole('button', { name: 'Create invitation link' }).click();
      await expectFieldError(page, 'invite-email', /./);
      const form = page.getByRole('form', { name: 'Invite a person' });
      expect(await form.getByRole('alert').textContent()).toBe('Check the field marked above.');
      expect(await seriousAxeViolations(page), 'invitation refused').toEqual([]);

      await email.press('Backspace');
      await expectNoFieldError(page, 'invite-email');
      expect(await form.getByRole('alert').count()).toBe(0);

      // Refused again, the message is back: it belongs to the new submit.
      await page.getByRole('button', { name: 'Create invitation link' }).click();
      await expectFieldError(page, 'invite-email', /./);
      await email.fill('cleo@example.test');
      await expectNoFieldError(page, 'invite-email');
      expect(site.browser.consoleErrors).toEqual([]);
    });

    it("another form's field message goes too when its field changes (the shared FormErrors)", async () => {
      await page.goto(`${site.base}/locations`);
      await page.locator('#new-location-name').fill('Hall');
      await page.locator('#new-location-key').fill('HALL 1!');
      await page.getByRole('button', { name: 'Create location' }).click();
      await expectFieldError(page, 'new-location-key', /./);
      // Another field changed: the key's message stays.
      await page.locator('#new-location-name').fill('Main hall');
      expect(await page.locator('#new-location-key-error').count()).toBe(1);
      await page.locator('#new-location-key').fill('HALL-1');
      await expectNoFieldError(page, 'new-location-key');
      expect(site.browser.consoleErrors).toEqual([]);
    });

    it("a location's refused tag value is said under the value field, as on the asset page", async () => {
      const made = await site.internal('POST', '/internal/locations', { name: 'Gate', external_key: 'GATE' });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const value = `tags-${made.body.data.id}-value`;
      await page.goto(`${site.base}/locations?selected=${made.body.data.id}`);
      const form = page.getByRole('form', { name: 'Attach a tag' });
      await form.getByRole('button', { name: 'Attach tag' }).click();
      await expectFieldError(page, value, /./);
      expect(await form.getByRole('alert').textContent()).toBe('Check the field marked above.');
      expect(await seriousAxeViolations(page), 'location tag refused').toEqual([]);
      await page.locator(`#${value}`).fill('GATE-1');
      await expectNoFieldError(page, value);
      expect(await form.getByRole('alert').count()).toBe(0);
      await form.getByRole('button', { name: 'Attach tag' }).click();
      await page.getByRole('button', { name: 'Detach RFID tag GATE-1' }).waitFor();
      // The refusal caused above, at a path known only now; nothing else.
      const errors = site.browser.consoleErrors.splice(0);
      expect(errors.filter((e) => !e.includes(`/internal/locations/${made.body.data.id}/tags`))).toEqual([]);
    });

    it("an invitation's Resend asks first, saying the earlier link stops working; Revoke asks too", async () => {
      const invited = await site.internal('POST', '/internal/invitations', {
        email: 'dana@example.test',
        role: 'viewer',
      });
      expect(invited.status, JSON.stringify(invited.body)).toBe(201);
      const oldToken = new URL(invited.body.url).hash.slice(1);
      const lookup = (token: string) =>
        fetch(`${site.base}/internal/invitations/lookup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token }),
        }).then((res) => res.status);
      expect(await lookup(oldToken)).toBe(200);

      await page.goto(`${site.base}/members`);
      await pressButton(page, 'Resend to dana@example.test');
      await questionAsked(page);
      const question = page.getByRole('group', { name: /^Send dana@example\.test a new link\?/ });
      await question.waitFor();
      expect(await question.textContent()).toContain('The link sent before stops working.');
      expect(await seriousAxeViolations(page), 'resend asked').toEqual([]);
      await pressButton(page, 'Cancel');
      await expect.poll(() => focusedText(page)).toBe('Resend');
      // Nothing was sent: the old link still works.
      expect(await lookup(oldToken)).toBe(200);

      await pressButton(page, 'Resend to dana@example.test');
      await questionAsked(page);
      await pressButton(page, 'Yes, send a new link');
      await page.getByRole('heading', { name: 'Invitation link for dana@example.test' }).waitFor();
      expect(await lookup(oldToken)).toBe(404);
      const newToken = new URL(await page.locator('#invitation-link').inputValue()).hash.slice(1);
      expect(await lookup(newToken)).toBe(200);
      await page.getByRole('button', { name: 'Done' }).click();

      await pressButton(page, 'Revoke invitation of dana@example.test');
      await questionAsked(page);
      await page.getByRole('group', { name: /^Revoke the invitation of dana@example\.test\?/ }).waitFor();
      await pressButton(page, 'Yes, revoke');
      await page.getByText('No open invitations.').waitFor();
      await expect.poll(() => focusedId(page)).toBe('invitations-title');
      expect(await lookup(newToken)).toBe(404);
      expect(await seriousAxeViolations(page), 'members after a revoke').toEqual([]);
      expect(site.browser.consoleErrors).toEqual([]);
    });
  },
);
