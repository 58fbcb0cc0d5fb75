import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeAfterConfirming, codeAt, confirmingCode } from '../helpers/totp-codes.js';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
  uniqueEmail,
} from './helpers.js';
import { addMember, browserOf } from './members-helpers.js';

const PASSWORD = 'correct horse battery';

/** Two-factor sign-in with authenticator codes (docs/web-app.md "Accounts"). */
describe('TOTP two-factor sign-in', () => {
  let t: InternalTestApp;

  const signIn = (body: Record<string, unknown>, address = freshAddress()) =>
    t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: address,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  /** Enrols the browser's person with a code of the current step; returns the secret. */
  async function enrol(b: Browser): Promise<string> {
    const started = await b.post('/internal/account/totp/enrolment');
    expect(started.statusCode, started.body).toBe(201);
    const { secret, otpauth_uri } = started.json().data;
    expect(secret).toMatch(/^[A-Z2-7]+$/);
    expect(otpauth_uri).toContain(`secret=${secret}`);
    expect(otpauth_uri).toMatch(/^otpauth:\/\/totp\/tagtrail:/);
    const pending = await b.get('/internal/account/totp');
    expect(pending.json().data).toMatchObject({ enabled: false, enabled_at: null });
    // From an address of its own: the tests' 127.0.0.1 would spend one bucket between them.
    const confirmed = await b.request({
      method: 'POST',
      url: '/internal/account/totp/confirm',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ code: await confirmingCode(secret) }),
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json().data).toMatchObject({ enabled: true, enabled_at: expect.any(String) });
    return secret;
  }

  beforeAll(async () => {
    t = await buildInternalApp();
  });
  afterAll(() => t.close());

  it('turning it on ends the person’s other sessions, those signed in with the password alone', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const earlier = await browserOf(t, me.orgId, { id: me.userId, email: me.email });
    expect((await earlier.get('/internal/session')).statusCode).toBe(200);
    const { secret } = (await me.post('/internal/account/totp/enrolment')).json().data;
    // From an address of its own: the sign-in limit counts codes by address too.
    const confirmed = await me.request({
      method: 'POST',
      url: '/internal/account/totp/confirm',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ code: await confirmingCode(secret) }),
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect((await me.get('/internal/session')).statusCode).toBe(200);
    expectInternalError(await earlier.get('/internal/session'), { status: 401 });
  });

  it('enrolment is not in force until a code confirms it; a wrong code is refused', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const started = await me.post('/internal/account/totp/enrolment');
    expect(started.statusCode).toBe(201);
    const wrong = await me.post('/internal/account/totp/confirm', { code: '000000' });
    expectInternalError(wrong, { status: 400, type: 'validation_error' });
    expect(wrong.json().error.fields[0]).toMatchObject({ field: 'code', code: 'invalid_value' });
    const malformed = await me.post('/internal/account/totp/confirm', { code: '12ab' });
    expectInternalError(malformed, { status: 400, type: 'validation_error' });
    // Not confirmed: the password alone still signs in.
    expect((await signIn({ email: me.email, password: PASSWORD })).statusCode).toBe(200);
  });

  it('with TOTP on, sign-in needs a valid code; wrong and reused codes are refused', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const secret = await enrol(me);

    const noCode = await signIn({ email: me.email, password: PASSWORD });
    expectInternalError(noCode, { status: 400, type: 'validation_error' });
    expect(noCode.json().error.fields[0]).toMatchObject({ field: 'totp_code', code: 'required' });
    expect(sessionCookieOf(noCode)).toBeUndefined();

    const wrong = await signIn({ email: me.email, password: PASSWORD, totp_code: '000000' });
    expectInternalError(wrong, { status: 401, type: 'unauthorized' });
    expect(sessionCookieOf(wrong)).toBeUndefined();

    // A wrong password with a good code is the usual 401, and reveals nothing about the code.
    const badPassword = await signIn({
      email: me.email,
      password: 'not it at all',
      totp_code: await codeAt(secret, 1),
    });
    expectInternalError(badPassword, { status: 401, detail: 'Invalid email or password' });

    // The code used to confirm is spent; the step after it is accepted once.
    const spent = await signIn({
      email: me.email,
      password: PASSWORD,
      totp_code: await codeAfterConfirming(secret, 0),
    });
    expectInternalError(spent, { status: 401, type: 'unauthorized' });
    const next = await codeAfterConfirming(secret, 1);
    const ok = await signIn({ email: me.email, password: PASSWORD, totp_code: next });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(sessionCookieOf(ok)).toBeDefined();
    const reused = await signIn({ email: me.email, password: PASSWORD, totp_code: next });
    expectInternalError(reused, { status: 401, type: 'unauthorized' });

    // A second enrolment cannot replace the enabled secret.
    expectInternalError(await me.post('/internal/account/totp/enrolment'), { status: 409 });
  });

  it('wrong codes count as failed sign-ins', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const secret = await enrol(me);
    // Confirming enrolment drew on the session's bucket, not the email's: ten wrong codes
    // (from ten addresses) use up the email's ten.
    for (let i = 0; i < 10; i++) {
      const res = await signIn({ email: me.email, password: PASSWORD, totp_code: '000000' });
      expect(res.statusCode).toBe(401);
    }
    const limited = await signIn({ email: me.email, password: PASSWORD, totp_code: await codeAt(secret, 1) });
    expectInternalError(limited, { status: 429, type: 'rate_limited' });
  });

  it('a signed-in person’s code checks are limited per session, whoever spent the email’s budget', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const secret = await enrol(me);
    // A stranger spends the email's budget: the session's checks are not refused for it.
    let spent = 0;
    while ((await signIn({ email: me.email, password: 'a guess' })).statusCode !== 429) spent++;
    expect(spent).toBe(10);
    const regenerate = (code: string) =>
      me.request({
        method: 'POST',
        url: '/internal/account/totp/recovery-codes',
        remoteAddress: freshAddress(),
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ code }),
      });
    // Confirming enrolment took one of the session's ten; nine wrong codes the rest.
    for (let i = 0; i < 9; i++) expect((await regenerate('000000')).statusCode).toBe(400);
    expectInternalError(await regenerate(await codeAfterConfirming(secret, 1)), {
      status: 429,
      type: 'rate_limited',
    });
  });

  it('disable needs the current password and a code; then the password alone signs in', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const secret = await enrol(me);
    const next = await codeAt(secret, 1);
    const badPassword = await me.post('/internal/account/totp/disable', {
      current_password: 'not it at all',
      code: next,
    });
    expectInternalError(badPassword, { status: 400, type: 'validation_error' });
    expect(badPassword.json().error.fields[0]).toMatchObject({ field: 'current_password' });
    const badCode = await me.post('/internal/account/totp/disable', {
      current_password: PASSWORD,
      code: '000000',
    });
    expectInternalError(badCode, { status: 400, type: 'validation_error' });
    const off = await me.post('/internal/account/totp/disable', { current_password: PASSWORD, code: next });
    expect(off.statusCode, off.body).toBe(204);
    expect((await me.get('/internal/account/totp')).json().data).toMatchObject({ enabled: false });
    expect((await signIn({ email: me.email, password: PASSWORD })).statusCode).toBe(200);
  });

  it('an organization requiring TOTP sends members without it to enrol first', async () => {
    const admin = await t.signUp({ password: PASSWORD });
    const memberUser = await addMember(t, admin.orgId, 'editor');
    const member = await browserOf(t, admin.orgId, memberUser);
    expect((await member.get('/internal/members/two-factor')).statusCode).toBe(403);
    expect((await admin.get('/internal/members/two-factor')).json().data).toEqual({ required: false });

    const adminSecret = await enrol(admin);
    const on = await admin.post('/internal/members/two-factor', { required: true });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().data).toEqual({ required: true });

    // The enrolled admin goes on as before; the member reaches only enrolment.
    expect((await admin.get('/internal/assets')).statusCode).toBe(200);
    expect((await admin.get('/internal/session')).json().data.totp_enrolment_required).toBe(false);
    expect((await member.get('/internal/session')).json().data.totp_enrolment_required).toBe(true);
    expectInternalError(await member.get('/internal/assets'), { status: 403, type: 'forbidden' });
    expect((await member.get('/internal/account/totp')).json().data).toMatchObject({
      enabled: false,
      required: true,
    });
    await enrol(member);
    expect((await member.get('/internal/assets')).statusCode).toBe(200);
    expect((await member.get('/internal/session')).json().data.totp_enrolment_required).toBe(false);

    // Required: it cannot be turned off.
    const off = await admin.post('/internal/account/totp/disable', {
      current_password: PASSWORD,
      code: await codeAt(adminSecret, 1),
    });
    expectInternalError(off, { status: 409, type: 'conflict' });

    // A person signed in fresh without TOTP gets a session limited to enrolment.
    const late = await addMember(t, admin.orgId, 'viewer');
    const lateBrowser = await browserOf(t, admin.orgId, late);
    expectInternalError(await lateBrowser.get('/internal/locations'), { status: 403 });
    expect((await lateBrowser.post('/internal/auth/sign-out')).statusCode).toBe(204);

    // Another organization is not affected.
    const other = await t.signUp({ email: uniqueEmail('other'), password: PASSWORD });
    expect((await other.get('/internal/assets')).statusCode).toBe(200);
  });
});
