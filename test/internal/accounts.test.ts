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
import { addMember, browserOf } from './members-helpers.js';

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

  it('a forged Host or X-Forwarded-Host header does not change the reset link', async () => {
    const m = await member();
    const issued = await admin.request({
      method: 'POST',
      url: `/internal/members/${m.id}/password-reset`,
      headers: {
        host: 'attacker.example',
        'x-forwarded-host': 'attacker.example',
        'x-forwarded-proto': 'https',
      },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const { token, url } = issued.json();
    expect(url).toBe(`http://localhost/reset-password#${token}`);
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

  it('an admin gets no reset link for themself: their own password needs the current one', async () => {
    const me = await t.signUp();
    const res = await me.post(`/internal/members/${me.userId}/password-reset`);
    expectInternalError(res, { status: 409, type: 'conflict', detail: /account page/ });
    const { rows } = await t.database.db.pool.query('SELECT 1 FROM password_resets WHERE user_id = $1', [
      me.userId,
    ]);
    expect(rows).toHaveLength(0);
  });

  it('a new password ends the reset links still open for the person', async () => {
    const m = await member();
    const token = (await admin.post(`/internal/members/${m.id}/password-reset`)).json().token;
    const own = await browserOf(t, admin.orgId, { id: m.id, email: m.email });
    const res = await own.post('/internal/auth/password', {
      current_password: 'first password',
      new_password: 'my own new password',
    });
    expect(res.statusCode, res.body).toBe(204);
    expectInternalError(await reset(token, 'the link’s password'), { status: 404, detail: /not valid/ });
    expect((await signIn(m.email, 'my own new password')).statusCode).toBe(200);
  });

  it.each([
    ['removed', (b: Browser, id: number) => b.del(`/internal/members/${id}`), 204],
    [
      'given another role',
      (b: Browser, id: number) => b.post(`/internal/members/${id}/role`, { role: 'editor' }),
      200,
    ],
  ] as const)(
    'an admin %s: the reset links and invitations they issued stop working',
    async (_, demote, status) => {
      const issuer = await addMember(t, admin.orgId, 'admin');
      const other = await browserOf(t, admin.orgId, issuer);
      const target = await member();
      const token = (await other.post(`/internal/members/${target.id}/password-reset`)).json().token;
      const invited = await other.post('/internal/invitations', {
        email: uniqueEmail('by-issuer'),
        role: 'admin',
      });
      expect(invited.statusCode, invited.body).toBe(201);
      // Another admin's links are not theirs, and keep working.
      const kept = (
        await admin.post('/internal/invitations', { email: uniqueEmail('kept'), role: 'viewer' })
      ).json();

      expect((await demote(admin, issuer.id)).statusCode).toBe(status);

      expectInternalError(await reset(token, 'taken over'), { status: 404, detail: /not valid/ });
      expect((await signIn(target.email, 'taken over')).statusCode).toBe(401);
      const accepted = await t.app.inject({
        method: 'POST',
        url: '/internal/invitations/accept',
        remoteAddress: freshAddress(),
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ token: invited.json().token, password: 'an admin now' }),
      });
      expectInternalError(accepted, { status: 404 });
      const open = (await admin.get('/internal/invitations?limit=100'))
        .json()
        .data.map((i: { id: number }) => i.id);
      expect(open).not.toContain(invited.json().data.id);
      expect(open).toContain(kept.data.id);
    },
  );
});
