import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tagtrail } from '../helpers/cli-in-process.js';
import { buildInternalApp, expectInternalError, freshAddress, type InternalTestApp } from './helpers.js';

/** `tagtrail two-factor reset`: the way back in for an organization's only admin. */
describe('tagtrail two-factor reset', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp();
  });
  afterAll(() => t.close());

  it("turns off the only admin's two-factor sign-in, ends their sessions, and logs the operator", async () => {
    const admin = await t.signUp();
    const started = await admin.post('/internal/account/totp/enrolment');
    const { secret } = started.json().data;
    const confirmed = await admin.request({
      method: 'POST',
      url: '/internal/account/totp/confirm',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ code: await generate({ secret }) }),
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    // The only admin cannot reset their own.
    expectInternalError(await admin.del(`/internal/members/${admin.userId}/two-factor`), { status: 409 });

    const printed = JSON.parse(
      await tagtrail(t.database.url, [
        'two-factor',
        'reset',
        '--org',
        String(admin.orgId),
        '--email',
        admin.email.toUpperCase(),
        '--json',
      ]),
    );
    expect(printed).toEqual({ org_id: admin.orgId, user_id: admin.userId, email: admin.email, reset: true });
    expectInternalError(await admin.get('/internal/session'), { status: 401 });

    const { rows } = await t.database.db.pool.query(
      `SELECT action, actor_type, before, after FROM activity
        WHERE org_id = $1 AND entity_type = 'two_factor' ORDER BY id DESC LIMIT 1`,
      [admin.orgId],
    );
    expect(rows[0]).toMatchObject({ action: 'deleted', actor_type: 'cli', after: null });

    // Nothing left to reset; nobody of that address in the organization.
    const args = (email: string) => ['two-factor', 'reset', '--org', String(admin.orgId), '--email', email];
    await expect(tagtrail(t.database.url, args(admin.email))).rejects.toMatchObject({ type: 'conflict' });
    await expect(tagtrail(t.database.url, args('nobody@example.test'))).rejects.toMatchObject({
      type: 'not_found',
    });
    const other = await t.signUp();
    await expect(tagtrail(t.database.url, args(other.email))).rejects.toMatchObject({ type: 'not_found' });
  });
});
