import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import {
  type Browser,
  browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
  uniqueEmail,
} from './helpers.js';

const PASSWORD = 'invited person pass';

/**
 * An organization keeps at least one admin (docs/web-app.md "Roles and members"): the last
 * one cannot be demoted or removed, and concurrent changes cannot get round it.
 */
describe('the last admin', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp();
  });
  afterAll(() => t.close());

  async function secondAdmin(admin: Browser): Promise<Browser> {
    const email = uniqueEmail('admin');
    const sent = (await admin.post('/internal/invitations', { email, role: 'admin' })).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: sent.token, password: PASSWORD }),
    });
    const data = res.json().data;
    return browser(t.app, sessionCookieOf(res)!, data.csrf_token, {
      orgId: admin.orgId,
      userId: data.user.id,
      email,
    });
  }

  it('cannot be demoted or removed (409), by themselves or anybody', async () => {
    const admin = await t.signUp();
    for (const role of ['editor', 'viewer']) {
      expectInternalError(await admin.post(`/internal/members/${admin.userId}/role`, { role }), {
        status: 409,
        type: 'conflict',
        detail: /last admin/,
      });
    }
    expectInternalError(await admin.del(`/internal/members/${admin.userId}`), {
      status: 409,
      type: 'conflict',
      detail: /last admin/,
    });
    expect((await admin.get('/internal/session')).json().data.user.role).toBe('admin');
  });

  it('with two admins one may step down, then the other is the last', async () => {
    const admin = await t.signUp();
    const other = await secondAdmin(admin);
    const down = await admin.post(`/internal/members/${admin.userId}/role`, { role: 'viewer' });
    expect(down.statusCode, down.body).toBe(200);
    // The demoted admin's own session lost the admin pages at once.
    expectInternalError(await admin.get('/internal/members'), { status: 403 });
    expectInternalError(await other.post(`/internal/members/${other.userId}/role`, { role: 'editor' }), {
      status: 409,
    });
    // Removing yourself as one of two admins signs you out.
    const third = await secondAdmin(other);
    const gone = await third.del(`/internal/members/${third.userId}`);
    expect(gone.statusCode).toBe(204);
    expect(String(gone.headers['set-cookie'])).toMatch(/^tagtrail_session=;/);
    expectInternalError(await third.get('/internal/session'), { status: 401 });
  });

  it('two admins demoting each other at once leave one admin', async () => {
    const a = await t.signUp();
    const b = await secondAdmin(a);
    const results = await Promise.all([
      a.post(`/internal/members/${b.userId}/role`, { role: 'viewer' }),
      b.post(`/internal/members/${a.userId}/role`, { role: 'viewer' }),
    ]);
    // The loser is refused either by the lock's count (409) or, when the winner finished
    // before its request was authorised, for no longer being an admin (403).
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes[0]).toBe(200);
    expect([403, 409]).toContain(codes[1]);
    // The service itself, called at once for both (no role check between): the lock decides.
    const c = await t.signUp();
    const d = await secondAdmin(c);
    const outcomes = await Promise.allSettled([
      t.services.internal.members.setRole(cliCaller(c.orgId), d.userId, 'viewer'),
      t.services.internal.members.setRole(cliCaller(c.orgId), c.userId, 'editor'),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ type: 'conflict' });
    const left = await t.database.db.pool.query(
      "SELECT id FROM users WHERE org_id = $1 AND role = 'admin' AND removed_at IS NULL",
      [c.orgId],
    );
    expect(left.rows).toHaveLength(1);
    const { rows } = await t.database.db.pool.query(
      "SELECT id FROM users WHERE org_id = $1 AND role = 'admin' AND removed_at IS NULL",
      [a.orgId],
    );
    expect(rows).toHaveLength(1);
  });

  it("another organization's members and invitations are 404 and untouched", async () => {
    const a = await t.signUp();
    const b = await t.signUp();
    const bMember = await secondAdmin(b);
    const bInvite = (await b.post('/internal/invitations', { email: uniqueEmail(), role: 'viewer' })).json();
    expectInternalError(await a.post(`/internal/members/${bMember.userId}/role`, { role: 'viewer' }), {
      status: 404,
    });
    expectInternalError(await a.del(`/internal/members/${bMember.userId}`), { status: 404 });
    expectInternalError(await a.del(`/internal/invitations/${bInvite.data.id}`), { status: 404 });
    expectInternalError(await a.post(`/internal/invitations/${bInvite.data.id}/resend`), { status: 404 });
    const aMembers = (await a.get('/internal/members')).json();
    expect(aMembers.data.map((m: { id: number }) => m.id)).toEqual([a.userId]);
    expect((await a.get('/internal/invitations')).json().total_count).toBe(0);
    expect((await b.get('/internal/members')).json().total_count).toBe(2);
    expect((await b.get('/internal/invitations')).json().total_count).toBe(1);
  });
});
