import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSIONS_PER_USER } from '../../src/accounts/session-service.js';
import {
  browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
  setCookieOf,
} from '../internal/helpers.js';

/** A person's live sessions are capped: a sign-in past the cap ends the least recently used. */
let t: InternalTestApp;
beforeAll(async () => {
  t = await buildInternalApp({ signup: 'open' });
});
afterAll(() => t.close());

const PASSWORD = 'correct horse battery';

const liveSessions = async (userId: number) =>
  Number(
    (
      await t.database.db.pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM web_sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()',
        [userId],
      )
    ).rows[0]!.n,
  );

const getSession = (token: string) =>
  t.app.inject({ method: 'GET', url: '/internal/session', headers: { cookie: `tagtrail_session=${token}` } });

describe('sessions per person', () => {
  it('a sign-in past the cap ends the least recently used session, which gets the 401 of a signed-out one; the others work', async () => {
    const admin = await t.signUp({ password: PASSWORD });
    const { orgId, userId } = admin;
    const sessions = t.services.internal.sessions;
    const tokens = [admin.token];
    for (let i = 1; i < SESSIONS_PER_USER; i++) tokens.push((await sessions.create(orgId, userId)).token);
    expect(await liveSessions(userId)).toBe(SESSIONS_PER_USER);

    // Session i was last used i minutes ago, so the last one is the least recently used...
    await t.database.db.pool.query(
      `UPDATE web_sessions s SET last_used_at = now() - make_interval(mins => o.n::int)
       FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS n FROM web_sessions WHERE user_id = $1) o
       WHERE s.id = o.id`,
      [userId],
    );
    // ...until it is used now (a use more than a minute after the last one is recorded),
    // which leaves the one before it the least recently used.
    const oldest = tokens.length - 1;
    expect((await getSession(tokens[oldest]!)).statusCode).toBe(200);

    const signIn = await t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: admin.email, password: PASSWORD }),
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    expect(await liveSessions(userId)).toBe(SESSIONS_PER_USER);

    const ended = await getSession(tokens[oldest - 1]!);
    expectInternalError(ended, {
      status: 401,
      type: 'unauthorized',
      detail: 'The session has ended; sign in again',
    });
    expect(setCookieOf(ended)).toMatch(/^tagtrail_session=;.*Max-Age=0/);

    const newest = browser(t.app, sessionCookieOf(signIn)!, signIn.json().data.csrf_token, admin);
    expect((await newest.get('/internal/session')).statusCode).toBe(200);
    for (const [i, token] of tokens.entries()) {
      if (i !== oldest - 1) expect((await getSession(token)).statusCode, `session ${i}`).toBe(200);
    }
  });

  it('concurrent sign-ins never leave more than the cap live', async () => {
    const admin = await t.signUp();
    const sessions = t.services.internal.sessions;
    for (let i = 1; i < SESSIONS_PER_USER; i++) await sessions.create(admin.orgId, admin.userId);
    const issued = await Promise.all(
      Array.from({ length: 20 }, () => sessions.create(admin.orgId, admin.userId)),
    );
    expect(await liveSessions(admin.userId)).toBe(SESSIONS_PER_USER);
    // Every sign-in keeps its own session: the others' ends never end it.
    for (const session of issued) {
      expect(await sessions.authenticate(session.token), session.sessionId).not.toBeNull();
    }
  });

  it('does not touch the sessions of colleagues', async () => {
    const a = await t.signUp();
    const b = await t.signUp();
    for (let i = 0; i < SESSIONS_PER_USER + 3; i++)
      await t.services.internal.sessions.create(a.orgId, a.userId);
    expect(await liveSessions(a.userId)).toBe(SESSIONS_PER_USER);
    expect((await b.get('/internal/session')).statusCode).toBe(200);
    expect(await liveSessions(b.userId)).toBe(1);
  });
});
