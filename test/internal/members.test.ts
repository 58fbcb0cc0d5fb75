import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  postSignedOut,
  sessionCookieOf,
  uniqueEmail,
} from './helpers.js';

const PASSWORD = 'invited person pass';

describe('invitations and members', () => {
  let t: InternalTestApp;
  let admin: Browser;

  beforeAll(async () => {
    t = await buildInternalApp();
    admin = await t.signUp({ organization: 'Site' });
  });
  afterAll(() => t.close());

  const signedOut = (url: string, body: unknown) => postSignedOut(t, url, body);

  async function invite(by: Browser, role: string, email = uniqueEmail(role)) {
    const res = await by.post('/internal/invitations', { email, role });
    expect(res.statusCode, res.body).toBe(201);
    return { email, ...(res.json() as { data: { id: number }; token: string; url: string }) };
  }

  /** Accepts an invitation and returns the new person's browser. */
  async function accept(token: string, email: string): Promise<Browser> {
    const res = await signedOut('/internal/invitations/accept', { token, password: PASSWORD });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    return browser(t.app, sessionCookieOf(res)!, data.csrf_token, {
      orgId: data.organization.id,
      userId: data.user.id,
      email,
    });
  }

  async function member(role: 'viewer' | 'editor' | 'admin') {
    const sent = await invite(admin, role);
    return accept(sent.token, sent.email);
  }

  it('a forged Host or X-Forwarded-Host header does not change the invitation link', async () => {
    const res = await admin.request({
      method: 'POST',
      url: '/internal/invitations',
      payload: JSON.stringify({ email: uniqueEmail('forged'), role: 'viewer' }),
      headers: {
        'content-type': 'application/json',
        host: 'attacker.example',
        'x-forwarded-host': 'attacker.example',
        'x-forwarded-proto': 'https',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const sent = res.json();
    expect(sent.url).toBe(`http://localhost/invitation#${sent.token}`);
    const resent = await admin.request({
      method: 'POST',
      url: `/internal/invitations/${sent.data.id}/resend`,
      headers: { host: 'attacker.example' },
    });
    expect(resent.json().url).toBe(`http://localhost/invitation#${resent.json().token}`);
  });

  it('an admin invites with a role; the link creates the account in the organization with that role', async () => {
    const sent = await invite(admin, 'editor', 'New.Person@Example.test');
    expect(sent.data).toMatchObject({
      email: 'New.Person@Example.test',
      role: 'editor',
      status: 'pending',
      invited_by: admin.email,
    });
    expect(sent.url).toMatch(new RegExp(`^http://localhost(:80)?/invitation#${sent.token}$`));
    const expires = Date.parse((sent.data as unknown as { expires_at: string }).expires_at);
    expect(expires - Date.now()).toBeGreaterThan(6.9 * 24 * 3600 * 1000);

    // Stored hashed: the token itself is nowhere in the table.
    const { rows } = await t.database.db.pool.query<{ token_hash: Buffer }>(
      'SELECT token_hash FROM invitations WHERE id = $1',
      [sent.data.id],
    );
    expect(rows[0]!.token_hash.equals(createHash('sha256').update(sent.token).digest())).toBe(true);
    const dump = await t.database.db.pool.query('SELECT i::text AS row FROM invitations i');
    expect(dump.rows.some((r: { row: string }) => r.row.includes(sent.token))).toBe(false);

    const listed = (await admin.get('/internal/invitations')).json();
    expect(listed.data.map((i: { id: number }) => i.id)).toContain(sent.data.id);

    const preview = await signedOut('/internal/invitations/lookup', { token: sent.token });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().data).toMatchObject({
      email: 'New.Person@Example.test',
      role: 'editor',
      organization: { id: admin.orgId, name: 'Site' },
    });

    const person = await accept(sent.token, sent.email);
    expect(person.orgId).toBe(admin.orgId);
    const session = (await person.get('/internal/session')).json().data;
    expect(session.user).toMatchObject({ email: 'New.Person@Example.test', role: 'editor' });
    // An editor may add assets, not mint keys.
    expect((await person.post('/internal/assets', { name: 'By the editor' })).statusCode).toBe(201);
    expectInternalError(await person.get('/internal/keys'), { status: 403, type: 'forbidden' });

    // The invitation is used up: gone from the list, the person among the members.
    const after = (await admin.get('/internal/invitations')).json();
    expect(after.data.map((i: { id: number }) => i.id)).not.toContain(sent.data.id);
    const members = (await admin.get('/internal/members')).json();
    expect(members.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: person.userId, email: 'New.Person@Example.test', role: 'editor' }),
        expect.objectContaining({ id: admin.userId, role: 'admin' }),
      ]),
    );

    // They sign in with the password they chose.
    const signIn = await signedOut('/internal/auth/sign-in', {
      email: 'new.person@example.test',
      password: PASSWORD,
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
  });

  it('a link works once: a second acceptance and a lookup after it are refused', async () => {
    const sent = await invite(admin, 'viewer');
    await accept(sent.token, sent.email);
    const again = await signedOut('/internal/invitations/accept', { token: sent.token, password: PASSWORD });
    expectInternalError(again, { status: 404, type: 'not_found', detail: /was used, revoked or replaced/ });
    const lookup = await signedOut('/internal/invitations/lookup', { token: sent.token });
    expectInternalError(lookup, { status: 404, type: 'not_found' });
  });

  it('two acceptances of one link at once make one account', async () => {
    const sent = await invite(admin, 'viewer');
    const both = await Promise.all([
      signedOut('/internal/invitations/accept', { token: sent.token, password: PASSWORD }),
      signedOut('/internal/invitations/accept', { token: sent.token, password: PASSWORD }),
    ]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 404]);
    const { rows } = await t.database.db.pool.query('SELECT id FROM users WHERE lower(email) = lower($1)', [
      sent.email,
    ]);
    expect(rows).toHaveLength(1);
  });

  it('an expired link is refused; the list says expired; resending gives a new link and kills the old', async () => {
    const sent = await invite(admin, 'editor');
    await t.database.db.pool.query(
      "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1",
      [sent.data.id],
    );
    const expired = await signedOut('/internal/invitations/accept', {
      token: sent.token,
      password: PASSWORD,
    });
    expectInternalError(expired, { status: 404, type: 'not_found', detail: /has expired/ });
    expectInternalError(await signedOut('/internal/invitations/lookup', { token: sent.token }), {
      status: 404,
      detail: /has expired/,
    });
    const listed = (await admin.get('/internal/invitations')).json().data;
    expect(listed.find((i: { id: number }) => i.id === sent.data.id)).toMatchObject({ status: 'expired' });
    const { rows } = await t.database.db.pool.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [
      sent.email,
    ]);
    expect(rows).toHaveLength(0);

    const resent = await admin.post(`/internal/invitations/${sent.data.id}/resend`);
    expect(resent.statusCode, resent.body).toBe(200);
    const fresh = resent.json();
    expect(fresh.token).not.toBe(sent.token);
    expect(fresh.data).toMatchObject({ id: sent.data.id, status: 'pending' });
    expectInternalError(
      await signedOut('/internal/invitations/accept', { token: sent.token, password: PASSWORD }),
      {
        status: 404,
        detail: /replaced/,
      },
    );
    const person = await accept(fresh.token, sent.email);
    expect((await person.get('/internal/session')).json().data.user.role).toBe('editor');
  });

  it('resending a pending invitation also kills the old link', async () => {
    const sent = await invite(admin, 'viewer');
    const fresh = (await admin.post(`/internal/invitations/${sent.data.id}/resend`)).json();
    expectInternalError(await signedOut('/internal/invitations/lookup', { token: sent.token }), {
      status: 404,
    });
    expect((await signedOut('/internal/invitations/lookup', { token: fresh.token })).statusCode).toBe(200);
  });

  it('a revoked invitation is gone and its link dead; revoking twice is 404', async () => {
    const sent = await invite(admin, 'viewer');
    expect((await admin.del(`/internal/invitations/${sent.data.id}`)).statusCode).toBe(204);
    expectInternalError(await signedOut('/internal/invitations/lookup', { token: sent.token }), {
      status: 404,
    });
    expectInternalError(await admin.del(`/internal/invitations/${sent.data.id}`), {
      status: 404,
      type: 'not_found',
    });
    expectInternalError(await admin.post(`/internal/invitations/${sent.data.id}/resend`), { status: 404 });
    const listed = (await admin.get('/internal/invitations')).json().data;
    expect(listed.map((i: { id: number }) => i.id)).not.toContain(sent.data.id);
  });

  it('an address with an account, or with a pending invitation, cannot be invited (409); an expired one can', async () => {
    expectInternalError(
      await admin.post('/internal/invitations', { email: admin.email.toUpperCase(), role: 'viewer' }),
      {
        status: 409,
        type: 'conflict',
        detail: 'An account with this email already exists',
      },
    );
    const other = await t.signUp({ organization: 'Elsewhere' });
    expectInternalError(await admin.post('/internal/invitations', { email: other.email, role: 'viewer' }), {
      status: 409,
    });
    const sent = await invite(admin, 'viewer');
    expectInternalError(await admin.post('/internal/invitations', { email: sent.email, role: 'editor' }), {
      status: 409,
      type: 'conflict',
      detail: /already invited/,
    });
    await t.database.db.pool.query(
      "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1",
      [sent.data.id],
    );
    const again = await invite(admin, 'editor', sent.email);
    expect(again.data.id).not.toBe(sent.data.id);
    expectInternalError(await signedOut('/internal/invitations/lookup', { token: sent.token }), {
      status: 404,
    });
  });

  it('bad input gets 400 with the field, never a 500', async () => {
    const cases: [string, unknown, string][] = [
      ['/internal/invitations', { email: 'not-an-email', role: 'viewer' }, 'email'],
      ['/internal/invitations', { email: 'a@b.test', role: 'owner' }, 'role'],
      ['/internal/invitations', { email: 'a@b.test' }, 'role'],
    ];
    for (const [url, body, field] of cases) {
      const error = expectInternalError(await admin.post(url, body), {
        status: 400,
        type: 'validation_error',
      });
      expect(error.fields?.map((f) => f.field)).toContain(field);
    }
    const badToken = await signedOut('/internal/invitations/accept', { token: 'short', password: PASSWORD });
    expect(expectInternalError(badToken, { status: 400 }).fields?.map((f) => f.field)).toContain('token');
    const sent = await invite(admin, 'viewer');
    const weak = await signedOut('/internal/invitations/accept', { token: sent.token, password: 'short' });
    expect(expectInternalError(weak, { status: 400 }).fields?.map((f) => f.field)).toContain('password');
    expectInternalError(await admin.post('/internal/members/1/role', { role: 'boss' }), { status: 400 });
    expectInternalError(await admin.post('/internal/members/999999/role', { role: 'viewer' }), {
      status: 404,
    });
    expectInternalError(await admin.del('/internal/members/999999'), { status: 404 });
  });

  it("a role change takes effect on the member's next request", async () => {
    const person = await member('viewer');
    expectInternalError(await person.post('/internal/assets', { name: 'x' }), { status: 403 });
    const changed = await admin.post(`/internal/members/${person.userId}/role`, { role: 'editor' });
    expect(changed.json().data).toMatchObject({ id: person.userId, role: 'editor' });
    expect((await person.post('/internal/assets', { name: 'x' })).statusCode).toBe(201);
    expect((await person.get('/internal/session')).json().data.user.role).toBe('editor');
  });

  it('removing a member ends their sessions at once; they cannot sign in; the address is free again', async () => {
    const person = await member('editor');
    const signIn = await signedOut('/internal/auth/sign-in', { email: person.email, password: PASSWORD });
    const second = sessionCookieOf(signIn)!;
    expect((await person.get('/internal/session')).statusCode).toBe(200);

    expect((await admin.del(`/internal/members/${person.userId}`)).statusCode).toBe(204);
    expectInternalError(await person.get('/internal/session'), { status: 401, type: 'unauthorized' });
    const other = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: `tagtrail_session=${second}` },
    });
    expectInternalError(other, { status: 401 });
    expectInternalError(
      await signedOut('/internal/auth/sign-in', { email: person.email, password: PASSWORD }),
      {
        status: 401,
      },
    );
    const members = (await admin.get('/internal/members')).json().data;
    expect(members.map((m: { id: number }) => m.id)).not.toContain(person.userId);
    expectInternalError(await admin.del(`/internal/members/${person.userId}`), { status: 404 });

    // Invited again, the same address gets a new account.
    const back = await invite(admin, 'viewer', person.email);
    const returned = await accept(back.token, person.email);
    expect(returned.userId).not.toBe(person.userId);
  });

  it("an API key is the organization's: it survives its minter's removal, and the list names the minter", async () => {
    const second = await member('admin');
    const minted = (
      await second.post('/internal/keys', { name: 'scanner', scopes: ['assets:read'], expires_at: null })
    ).json();
    expect(minted.data.created_by).toEqual({ id: second.userId, email: second.email, removed: false });
    expect((await admin.del(`/internal/members/${second.userId}`)).statusCode).toBe(204);
    const listed = (await admin.get('/internal/keys')).json().data;
    expect(listed.find((k: { id: string }) => k.id === minted.data.id)).toMatchObject({
      status: 'active',
      created_by: { id: second.userId, email: second.email, removed: true },
    });
    const api = await t.app.inject({
      method: 'GET',
      url: '/api/v1/assets',
      headers: { authorization: `Bearer ${minted.token}` },
    });
    expect(api.statusCode, api.body).toBe(200);
  });
});
