import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionService } from '../../src/accounts/session-service.js';
import { buildInternalApp, type InternalTestApp } from '../internal/helpers.js';

/** Issue 9 item 6: ended web sessions are deleted by the scheduled sweep (SessionSweeper). */
let t: InternalTestApp;
beforeAll(async () => {
  t = await buildInternalApp({ signup: 'open' });
});
afterAll(() => t.close());

const exists = async (id: string) =>
  (await t.database.db.pool.query('SELECT 1 FROM web_sessions WHERE id = $1', [id])).rowCount === 1;

describe('SessionService.sweepEnded', () => {
  it('deletes expired and revoked sessions of every organization and keeps live ones working', async () => {
    const sessions = t.services.internal.sessions;
    const [a, b] = [await t.signUp(), await t.signUp()];
    // Sessions created 13 hours ago have expired (12-hour lifetime).
    const past = new SessionService(
      t.database.db,
      t.services.tokens,
      sessions.csrf,
      () => Date.now() - 13 * 3600_000,
    );
    const expiredA = await past.create(a.orgId, a.userId);
    const expiredB = await past.create(b.orgId, b.userId);
    const revoked = await sessions.create(a.orgId, a.userId);
    await sessions.revoke(a.orgId, revoked.sessionId);
    const live = await sessions.create(b.orgId, b.userId);

    const deleted = await sessions.sweepEnded();
    expect(deleted).toBeGreaterThanOrEqual(3);
    for (const ended of [expiredA, expiredB, revoked]) expect(await exists(ended.sessionId)).toBe(false);
    expect(await exists(live.sessionId)).toBe(true);
    expect(await sessions.authenticate(live.token)).toMatchObject({ sessionId: live.sessionId });
    // The signed-up browsers' sessions are live too.
    expect((await a.get('/internal/session')).statusCode).toBe(200);
    // A cookie naming a swept row gets the usual 401 of an ended session.
    const res = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: `tagtrail_session=${revoked.token}` },
    });
    expect(res.statusCode).toBe(401);
    expect(await sessions.sweepEnded()).toBe(0);
  });
});
