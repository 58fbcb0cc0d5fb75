import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/accounts/passwords.js';
import { codeAfterConfirming, codeAt, confirmingCode } from '../helpers/totp-codes.js';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
} from './helpers.js';
import { addMember, browserOf } from './members-helpers.js';

const PASSWORD = 'correct horse battery';
const CODE_SHAPE = /^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/;

interface Entry {
  actor: { type: string; id: string | null; name: string | null };
  entity_type: string;
  entity_id: string;
  action: string;
  record_type: string;
  record_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/**
 * Two-factor recovery codes, an administrator's reset, the QR code, and their record in the
 * activity log (docs/web-app.md "Accounts").
 */
describe('two-factor recovery codes and reset', () => {
  let t: InternalTestApp;

  const signIn = (body: Record<string, unknown>, address = freshAddress()) =>
    t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: address,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  /** A POST from an address of its own: code checks count against the per-address sign-in limit. */
  const postFrom = (b: Browser, url: string, body?: unknown) =>
    b.request({
      method: 'POST',
      url,
      remoteAddress: freshAddress(),
      ...(body === undefined
        ? {}
        : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });

  /** Enrols the browser's person; returns the secret and the recovery codes shown once. */
  async function enrol(b: Browser): Promise<{ secret: string; codes: string[] }> {
    const started = await b.post('/internal/account/totp/enrolment');
    expect(started.statusCode, started.body).toBe(201);
    const { secret } = started.json().data;
    const confirmed = await postFrom(b, '/internal/account/totp/confirm', {
      code: await confirmingCode(secret),
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    return { secret, codes: confirmed.json().data.recovery_codes };
  }

  /** A member of the organization who can sign in with PASSWORD. */
  async function memberWithPassword(orgId: number, role: 'viewer' | 'editor' = 'editor') {
    const member = await addMember(t, orgId, role);
    await t.database.db.pool.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
      member.id,
      await hashPassword(PASSWORD),
    ]);
    return { ...member, browser: await browserOf(t, orgId, member) };
  }

  const twoFactorLog = async (b: Browser, userId: number): Promise<Entry[]> => {
    const res = await b.get(`/internal/activity?entity_type=two_factor&record_type=user&record_id=${userId}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  beforeAll(async () => {
    t = await buildInternalApp();
  });
  afterAll(() => t.close());

  it('enrolment shows a QR code of the URI; confirming answers ten distinct recovery codes once', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const started = await me.post('/internal/account/totp/enrolment');
    const { secret, otpauth_uri, otpauth_qr } = started.json().data;
    expect(otpauth_qr).toMatch(/^data:image\/svg\+xml;base64,/);
    const svg = Buffer.from(otpauth_qr.split(',')[1], 'base64').toString('utf8');
    expect(svg).toContain('<svg');
    expect(svg).toContain('<path');
    expect(otpauth_uri).toContain(`secret=${secret}`);
    expect((await me.get('/internal/account/totp')).json().data.recovery_codes_left).toBe(0);

    const confirmed = await postFrom(me, '/internal/account/totp/confirm', { code: await codeAt(secret) });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const data = confirmed.json().data;
    expect(data).toMatchObject({ enabled: true, recovery_codes_left: 10 });
    expect(data.recovery_codes).toHaveLength(10);
    expect(new Set(data.recovery_codes).size).toBe(10);
    for (const code of data.recovery_codes) expect(code).toMatch(CODE_SHAPE);
    // Only their hashes are kept: no code is readable from the database.
    const { rows } = await t.database.db.pool.query(
      'SELECT recovery_code_hashes FROM user_totp WHERE user_id = $1',
      [me.userId],
    );
    const stored = JSON.stringify(rows);
    for (const code of data.recovery_codes) expect(stored).not.toContain(code.replaceAll('-', ''));
    // The status never repeats them.
    const status = (await me.get('/internal/account/totp')).json().data;
    expect(status).toEqual({
      enabled: true,
      enabled_at: expect.any(String),
      required: false,
      recovery_codes_left: 10,
    });
  });

  it('a recovery code signs in once in place of the app code, in any case and with or without dashes', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const { codes } = await enrol(me);
    const first = codes[0]!;

    const ok = await signIn({ email: me.email, password: PASSWORD, recovery_code: first.toUpperCase() });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(sessionCookieOf(ok)).toBeDefined();
    const again = await signIn({ email: me.email, password: PASSWORD, recovery_code: first });
    expectInternalError(again, {
      status: 401,
      type: 'unauthorized',
      detail: 'Invalid or already used recovery code',
    });
    expect(sessionCookieOf(again)).toBeUndefined();

    const undashed = await signIn({
      email: me.email,
      password: PASSWORD,
      recovery_code: codes[1]!.replaceAll('-', ''),
    });
    expect(undashed.statusCode, undashed.body).toBe(200);
    expect((await me.get('/internal/account/totp')).json().data.recovery_codes_left).toBe(8);

    // Somebody else's code, a made-up one and a malformed one.
    const wrong = await signIn({ email: me.email, password: PASSWORD, recovery_code: 'aaaa-bbbb-cccc-dddd' });
    expectInternalError(wrong, { status: 401, type: 'unauthorized' });
    const malformed = await signIn({ email: me.email, password: PASSWORD, recovery_code: '0000-1111' });
    expectInternalError(malformed, { status: 400, type: 'validation_error' });
    expect(malformed.json().error.fields[0]).toMatchObject({ field: 'recovery_code' });
    // Both factors at once is ambiguous, and spends nothing.
    const both = await signIn({
      email: me.email,
      password: PASSWORD,
      totp_code: '123456',
      recovery_code: codes[2],
    });
    expectInternalError(both, { status: 400, type: 'validation_error' });
    expect(both.json().error.fields[0]).toMatchObject({ field: 'recovery_code', code: 'ambiguous_fields' });
    // A wrong password with a good recovery code is the usual 401 and spends nothing.
    const badPassword = await signIn({ email: me.email, password: 'not it at all', recovery_code: codes[2] });
    expectInternalError(badPassword, { status: 401, detail: 'Invalid email or password' });
    expect((await me.get('/internal/account/totp')).json().data.recovery_codes_left).toBe(8);
  });

  it('two sign-ins racing with the same recovery code: exactly one succeeds', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const { codes } = await enrol(me);
    const results = await Promise.all(
      [0, 1, 2, 3].map(() => signIn({ email: me.email, password: PASSWORD, recovery_code: codes[5] })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401]);
    expect((await me.get('/internal/account/totp')).json().data.recovery_codes_left).toBe(9);
  });

  it('regenerating needs a current app code; the old codes stop working', async () => {
    const me = await t.signUp({ password: PASSWORD });
    expectInternalError(await postFrom(me, '/internal/account/totp/recovery-codes', { code: '123456' }), {
      status: 409,
      type: 'conflict',
    });
    const { secret, codes } = await enrol(me);
    const wrong = await postFrom(me, '/internal/account/totp/recovery-codes', { code: '000000' });
    expectInternalError(wrong, { status: 400, type: 'validation_error' });
    expect(wrong.json().error.fields[0]).toMatchObject({ field: 'code', code: 'invalid_value' });
    expectInternalError(await postFrom(me, '/internal/account/totp/recovery-codes', {}), {
      status: 400,
      type: 'validation_error',
    });
    // The code that confirmed enrolment is spent.
    const replay = await postFrom(me, '/internal/account/totp/recovery-codes', {
      code: await codeAfterConfirming(secret, 0),
    });
    expectInternalError(replay, { status: 400, type: 'validation_error' });

    const fresh = await postFrom(me, '/internal/account/totp/recovery-codes', {
      code: await codeAfterConfirming(secret, 1),
    });
    expect(fresh.statusCode, fresh.body).toBe(201);
    const next: string[] = fresh.json().data.recovery_codes;
    expect(next).toHaveLength(10);
    expect(next.some((c) => codes.includes(c))).toBe(false);
    expectInternalError(await signIn({ email: me.email, password: PASSWORD, recovery_code: codes[0] }), {
      status: 401,
    });
    expect((await signIn({ email: me.email, password: PASSWORD, recovery_code: next[0] })).statusCode).toBe(
      200,
    );
    expect((await me.get('/internal/account/totp')).json().data.recovery_codes_left).toBe(9);
  });

  it("an admin resets a member's two-factor sign-in: the member's sessions end, enrolment is asked again", async () => {
    const admin = await t.signUp({ password: PASSWORD });
    const member = await memberWithPassword(admin.orgId);
    await enrol(member.browser);
    const members = (await admin.get('/internal/members')).json().data;
    expect(members.find((m: { id: number }) => m.id === member.id)).toMatchObject({ two_factor: true });
    expect(members.find((m: { id: number }) => m.id === admin.userId)).toMatchObject({ two_factor: false });
    await admin.post('/internal/members/two-factor', { required: true });
    const adminSecret = (await enrol(admin)).secret;
    expect(adminSecret).toBeTruthy();

    // Not an admin: 403; a member of another organization or nobody: 404; oneself: 409.
    const viewer = await memberWithPassword(admin.orgId, 'viewer');
    await enrol(viewer.browser);
    expectInternalError(await viewer.browser.del(`/internal/members/${member.id}/two-factor`), {
      status: 403,
      type: 'forbidden',
    });
    const other = await t.signUp({ password: PASSWORD });
    await enrol(other);
    expectInternalError(await admin.del(`/internal/members/${other.userId}/two-factor`), { status: 404 });
    expectInternalError(await admin.del('/internal/members/999999/two-factor'), { status: 404 });
    expectInternalError(await admin.del(`/internal/members/${admin.userId}/two-factor`), {
      status: 409,
      type: 'conflict',
    });
    expectInternalError(await admin.del('/internal/members/abc/two-factor'), { status: 400 });
    // The other organization's person still has theirs.
    expect((await other.get('/internal/account/totp')).json().data.enabled).toBe(true);

    const reset = await admin.del(`/internal/members/${member.id}/two-factor`);
    expect(reset.statusCode, reset.body).toBe(204);
    expectInternalError(await member.browser.get('/internal/session'), { status: 401 });
    // Nothing left to reset.
    expectInternalError(await admin.del(`/internal/members/${member.id}/two-factor`), {
      status: 409,
      type: 'conflict',
    });
    // The password alone signs in again, to a session limited to enrolment (required here).
    const back = await signIn({ email: member.email, password: PASSWORD });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().data.totp_enrolment_required).toBe(true);
    // The admin goes on as before.
    expect((await admin.get('/internal/assets')).statusCode).toBe(200);
  });

  it('the activity log records enrolment, recovery-code use, regeneration, turning off and reset, without a secret or code', async () => {
    const admin = await t.signUp({ password: PASSWORD });
    const member = await memberWithPassword(admin.orgId);
    const mine = await enrol(admin);
    const theirs = await enrol(member.browser);

    // A sign-in with an app code is no activity.
    expect(
      (await signIn({ email: admin.email, password: PASSWORD, totp_code: await codeAt(mine.secret, 1) }))
        .statusCode,
    ).toBe(200);
    expect(await twoFactorLog(admin, admin.userId)).toHaveLength(1);

    expect(
      (await signIn({ email: member.email, password: PASSWORD, recovery_code: theirs.codes[0] })).statusCode,
    ).toBe(200);
    const regenerated = await postFrom(member.browser, '/internal/account/totp/recovery-codes', {
      code: await codeAt(theirs.secret, 1),
    });
    expect(regenerated.statusCode).toBe(201);
    expect((await admin.del(`/internal/members/${member.id}/two-factor`)).statusCode).toBe(204);

    const adminActor = { type: 'user', id: String(admin.userId), name: admin.email };
    const memberActor = { type: 'user', id: String(member.id), name: member.email };
    const log = (await twoFactorLog(admin, member.id)).reverse();
    expect(log.map((e) => [e.action, e.actor])).toEqual([
      ['created', memberActor],
      ['updated', memberActor],
      ['updated', memberActor],
      ['deleted', adminActor],
    ]);
    for (const e of log) {
      expect(e).toMatchObject({
        entity_type: 'two_factor',
        entity_id: String(member.id),
        record_type: 'user',
      });
    }
    const [created, used, regen, reset] = log as [Entry, Entry, Entry, Entry];
    expect(created.before).toBeNull();
    expect(created.after).toMatchObject({ enabled_at: expect.any(String), recovery_codes_left: 10 });
    expect(used.before).toMatchObject({ recovery_codes_left: 10, recovery_code_used_at: null });
    expect(used.after).toMatchObject({ recovery_codes_left: 9, recovery_code_used_at: expect.any(String) });
    expect(regen.after).toMatchObject({ recovery_codes_left: 10 });
    expect(regen.after?.recovery_codes_generated_at).not.toEqual(regen.before?.recovery_codes_generated_at);
    expect(reset.after).toBeNull();
    expect(reset.before).toMatchObject({ recovery_codes_left: 10 });

    // No secret, code or code hash anywhere in the organization's log.
    const all = JSON.stringify((await admin.get('/internal/activity?limit=200')).json().data);
    const newCodes: string[] = regenerated.json().data.recovery_codes;
    for (const secret of [mine.secret, theirs.secret]) expect(all).not.toContain(secret);
    for (const code of [...mine.codes, ...theirs.codes, ...newCodes]) {
      const bare = code.replaceAll('-', '');
      expect(all).not.toContain(bare);
      expect(all).not.toContain(code);
      expect(all).not.toContain(createHash('sha256').update(bare).digest('hex'));
    }
  });

  it('turning it off is recorded as the person deleting it; requiring it is recorded on the organization', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const { secret } = await enrol(me);
    // The switch is recorded on the organization, both ways.
    expect((await me.post('/internal/members/two-factor', { required: true })).statusCode).toBe(200);
    expect((await me.post('/internal/members/two-factor', { required: false })).statusCode).toBe(200);
    const org = (await me.get('/internal/activity?entity_type=organization&limit=5')).json().data as Entry[];
    expect(
      org.slice(0, 2).map((e) => [e.action, e.before?.require_totp, e.after?.require_totp, e.actor.id]),
    ).toEqual([
      ['updated', true, false, String(me.userId)],
      ['updated', false, true, String(me.userId)],
    ]);

    const off = await postFrom(me, '/internal/account/totp/disable', {
      current_password: PASSWORD,
      code: await codeAt(secret, 1),
    });
    expect(off.statusCode, off.body).toBe(204);
    const log = await twoFactorLog(me, me.userId);
    expect(log.map((e) => [e.action, e.actor.id])).toEqual([
      ['deleted', String(me.userId)],
      ['created', String(me.userId)],
    ]);
    // A pending enrolment that was never confirmed is no activity.
    expect((await me.post('/internal/account/totp/enrolment')).statusCode).toBe(201);
    expect(await twoFactorLog(me, me.userId)).toHaveLength(2);
  });
});
