import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, buildInternalApp, type InternalTestApp } from '../internal/helpers.js';

interface Entry {
  actor: { type: string; id: string | null; name: string | null };
  action: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The activity log of members and invitations (docs/web-app.md "Activity log"). */
describe('activity log: members and invitations', () => {
  let t: InternalTestApp;
  let me: Browser;

  async function recordLog(type: string, id: number | string): Promise<Entry[]> {
    const res = await me.get(`/internal/activity?record_type=${type}&record_id=${id}&limit=200`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }
  const mine = () => ({ type: 'user', id: String(me.userId), name: me.email });

  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
  });
  afterAll(() => t.close());

  it('records invitations and members: invited, accepted, role changed, removed', async () => {
    const email = `invitee-${Date.now()}@example.test`;
    const invited = await me.post('/internal/invitations', { email, role: 'viewer' });
    expect(invited.statusCode, invited.body).toBe(201);
    const invitationId = invited.json().data.id;
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: invited.json().token, password: 'a long enough password' }),
    });
    expect(accepted.statusCode, accepted.body).toBeLessThan(300);
    const userId = accepted.json().data.user.id;
    expect((await me.post(`/internal/members/${userId}/role`, { role: 'editor' })).statusCode).toBe(200);
    expect((await me.del(`/internal/members/${userId}`)).statusCode).toBe(204);

    const invitation = (await recordLog('invitation', invitationId)).reverse();
    expect(invitation[0]).toMatchObject({ action: 'created', actor: mine() });
    expect(invitation[0]!.after).toMatchObject({ email, role: 'viewer' });
    expect(invitation[0]!.after!.token_hash).toMatch(/^[0-9a-f]{8}$/);
    expect(invitation[1]!.after!.accepted_at).toEqual(expect.any(String));

    const member = (await recordLog('user', userId)).reverse();
    expect(member.map((e) => e.action)).toEqual(['created', 'updated', 'deleted']);
    expect(member[1]).toMatchObject({ actor: mine(), before: { role: 'viewer' }, after: { role: 'editor' } });
    expect(member[2]!.actor).toEqual(mine());
    expect(member[2]!.after!.removed_at).toEqual(expect.any(String));
  });

  it('records password resets: issued, replaced by a newer link, used', async () => {
    const email = `reset-${Date.now()}@example.test`;
    const invited = await me.post('/internal/invitations', { email, role: 'viewer' });
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: invited.json().token, password: 'a long enough password' }),
    });
    expect(accepted.statusCode, accepted.body).toBeLessThan(300);
    const userId = accepted.json().data.user.id;
    const first = await me.post(`/internal/members/${userId}/password-reset`, {});
    expect(first.statusCode, first.body).toBe(201);
    const second = await me.post(`/internal/members/${userId}/password-reset`, {});
    expect(second.statusCode, second.body).toBe(201);
    const used = await t.app.inject({
      method: 'POST',
      url: '/internal/auth/password-reset',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: second.json().token, new_password: 'another long password' }),
    });
    expect(used.statusCode, used.body).toBe(204);

    const res = await me.get('/internal/activity?entity_type=password_reset&limit=200');
    expect(res.statusCode, res.body).toBe(200);
    const log: Array<Entry & { entity_id: string }> = res.json().data.reverse();
    const mineOnly = log.filter((e) => e.after?.user_id === userId || e.before?.user_id === userId);
    const member = { type: 'user', id: String(userId), name: email };
    expect(mineOnly.map((e) => [e.entity_id, e.action, e.actor])).toEqual([
      [mineOnly[0]!.entity_id, 'created', mine()],
      [mineOnly[0]!.entity_id, 'deleted', mine()],
      [mineOnly[2]!.entity_id, 'created', mine()],
      // The link's use is the person's own change.
      [mineOnly[2]!.entity_id, 'updated', member],
    ]);
    expect(mineOnly[2]!.entity_id).not.toBe(mineOnly[0]!.entity_id);
    expect(mineOnly[0]!.after).toMatchObject({ user_id: userId, used_at: null, revoked_at: null });
    // The token's hash shows as a short fingerprint; the organization and creation time are left out.
    expect(mineOnly[0]!.after!.token_hash).toMatch(/^[0-9a-f]{8}$/);
    expect(mineOnly[0]!.after).not.toHaveProperty('org_id');
    expect(mineOnly[3]!.after!.used_at).toEqual(expect.any(String));
  });
});
