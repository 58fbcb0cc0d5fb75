import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PasswordResetService } from '../../src/accounts/password-resets.js';
import { userCaller } from '../../src/caller.js';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  uniqueEmail,
} from './helpers.js';

/** Accounts (docs/web-app.md "Accounts"): email change, admin-issued password reset links. */
describe('accounts: email change and password reset links', () => {
  let t: InternalTestApp;
  let admin: Browser;

  const signIn = (email: string, password: string) =>
    t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email, password }),
    });
  const reset = (token: string, password: string) =>
    t.app.inject({
      method: 'POST',
      url: '/internal/auth/password-reset',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token, new_password: password }),
    });

  /** A second member of the admin's organization, by invitation; returns their id and address. */
  async function member(): Promise<{ id: number; email: string; cookie: string }> {
    const email = uniqueEmail('member');
    const invited = await admin.post('/internal/invitations', { email, role: 'editor' });
    expect(invited.statusCode, invited.body).toBe(201);
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: invited.json().token, password: 'first password' }),
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
    const cookie = String(accepted.headers['set-cookie']).split(';')[0]!;
    return { id: accepted.json().data.user.id, email, cookie };
  }

  beforeAll(async () => {
    t = await buildInternalApp();
    admin = await t.signUp();
  });
  afterAll(() => t.close());

  it('changes the email with the current password; the new address signs in, the old does not', async () => {
    const me = await t.signUp();
    const next = uniqueEmail('moved');
    const wrong = await me.post('/internal/auth/email', { current_password: 'nope nope', new_email: next });
    const error = expectInternalError(wrong, { status: 400, type: 'validation_error' });
    expect(error.fields).toEqual([
      expect.objectContaining({ field: 'current_password', code: 'invalid_value' }),
    ]);

    const res = await me.post('/internal/auth/email', {
      current_password: 'correct horse battery',
      new_email: next,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.user.email).toBe(next);
    expect((await me.get('/internal/session')).json().data.user.email).toBe(next);
    expect((await signIn(next, 'correct horse battery')).statusCode).toBe(200);
    expect((await signIn(me.email, 'correct horse battery')).statusCode).toBe(401);

    const [entry] = (await me.get(`/internal/activity?record_type=user&record_id=${me.userId}`)).json().data;
    expect(entry).toMatchObject({ action: 'updated', before: { email: me.email }, after: { email: next } });
  });

  it('refuses an address another account has, and one that is no address', async () => {
    const me = await t.signUp();
    const taken = await me.post('/internal/auth/email', {
      current_password: 'correct horse battery',
      new_email: admin.email.toUpperCase(),
    });
    expectInternalError(taken, { status: 409, type: 'conflict' });
    const bad = await me.post('/internal/auth/email', {
      current_password: 'correct horse battery',
      new_email: 'not an address',
    });
    expectInternalError(bad, { status: 400, type: 'validation_error' });
  });

  it('an admin issues a reset link; it sets a new password once and ends the member’s sessions', async () => {
    const m = await member();
    const issued = await admin.post(`/internal/members/${m.id}/password-reset`);
    expect(issued.statusCode, issued.body).toBe(201);
    const { token, url, data } = issued.json();
    expect(url).toMatch(new RegExp(`^http://localhost(:80)?/reset-password#${token}$`));
    expect(data.email).toBe(m.email);
    // Only the hash is stored.
    const stored = await t.database.db.pool.query(
      'SELECT token_hash FROM password_resets WHERE user_id = $1',
      [m.id],
    );
    expect(String(stored.rows[0].token_hash)).not.toContain(token);

    expect((await reset(token, 'second password')).statusCode).toBe(204);
    expect((await signIn(m.email, 'second password')).statusCode).toBe(200);
    expect((await signIn(m.email, 'first password')).statusCode).toBe(401);
    // Their session from before the reset has ended.
    const old = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: m.cookie },
    });
    expect(old.statusCode).toBe(401);

    const again = await reset(token, 'third password');
    expectInternalError(again, { status: 404, detail: /already used/ });
    expect((await signIn(m.email, 'third password')).statusCode).toBe(401);

    const log = (await admin.get(`/internal/activity?record_type=user&record_id=${m.id}`)).json().data;
    expect(log[0]).toMatchObject({ action: 'updated', actor: { type: 'user', id: String(m.id) } });
  });

  it('a link expires, a newer one replaces it, and only admins of the same organization issue them', async () => {
    const m = await member();
    const expired = await new PasswordResetService(t.database.db, -1000).issue(
      userCaller(admin.orgId, { id: admin.userId, email: admin.email }),
      m.id,
    );
    expectInternalError(await reset(expired.token, 'never used'), { status: 404, detail: /expired/ });

    const first = (await admin.post(`/internal/members/${m.id}/password-reset`)).json().token;
    const second = (await admin.post(`/internal/members/${m.id}/password-reset`)).json().token;
    expectInternalError(await reset(first, 'never used'), { status: 404, detail: /not valid/ });
    expect((await reset(second, 'a good password')).statusCode).toBe(204);

    const other = await t.signUp();
    expectInternalError(await other.post(`/internal/members/${m.id}/password-reset`), { status: 404 });
    expectInternalError(await reset('A'.repeat(43), 'whatever password'), { status: 404 });
    expectInternalError(await reset('short', 'whatever password'), { status: 400 });
  });
});
