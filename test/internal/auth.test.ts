import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_UP_POLICY } from '../../src/accounts/sign-in-limiter.js';
import { json, signIn, signUpRequest } from './auth-requests.js';
import {
  browser,
  buildInternalApp,
  expectInternalError,
  expectNoRateLimitHeaders,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
  setCookieOf,
  uniqueEmail,
} from './helpers.js';

describe('sessions', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'open' });
  });
  afterAll(() => t.close());

  it('sign-up answers the Session, sets the cookie, and stores an argon2id hash', async () => {
    const email = uniqueEmail('shape');
    const res = await signUpRequest(t, {
      email,
      password: 'correct horse',
      organization_name: '  Shape Co ',
    });
    expect(res.statusCode, res.body).toBe(201);
    expectNoRateLimitHeaders(res);
    const data = res.json().data;
    expect(data).toEqual({
      user: { id: expect.any(Number), email, role: 'admin' },
      organization: { id: expect.any(Number), name: 'Shape Co' },
      csrf_token: expect.any(String),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      totp_enrolment_required: false,
    });
    const lifetime = Date.parse(data.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(12 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(12 * 3600_000);
    const { rows } = await t.database.db.pool.query('SELECT password_hash FROM users WHERE id = $1', [
      data.user.id,
    ]);
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);

    const me = browser(t.app, sessionCookieOf(res)!, data.csrf_token, {
      orgId: data.organization.id,
      userId: data.user.id,
      email,
    });
    const session = await me.get('/internal/session');
    expect(session.statusCode).toBe(200);
    expect(session.json().data).toEqual(data);
    expect(session.headers['cache-control']).toBe('no-store');
    expectNoRateLimitHeaders(session);
  });

  it('cookie flags: HttpOnly, SameSite=Strict, Path=/, Max-Age of the session, no Secure over plain HTTP', async () => {
    const res = await signUpRequest(t, {
      email: uniqueEmail(),
      password: 'long enough',
      organization_name: 'Flags',
    });
    const cookie = setCookieOf(res)!;
    const attributes = cookie.split('; ').slice(1);
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain('SameSite=Strict');
    expect(attributes).toContain('Path=/');
    const maxAge = Number(attributes.find((a) => a.startsWith('Max-Age='))?.slice(8));
    expect(maxAge).toBeGreaterThanOrEqual(43200 - 2);
    expect(maxAge).toBeLessThanOrEqual(43200);
    expect(attributes).not.toContain('Secure');
    // Without TAGTRAIL_TRUST_PROXY a forwarded protocol is not believed.
    const forwarded = await t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-up',
      remoteAddress: freshAddress(),
      headers: { ...json, 'x-forwarded-proto': 'https' },
      payload: JSON.stringify({ email: uniqueEmail(), password: 'long enough', organization_name: 'F' }),
    });
    expect(setCookieOf(forwarded)!.split('; ')).not.toContain('Secure');
  });

  it('sign-in: good credentials get a session; bad ones 401 with one message', async () => {
    const me = await t.signUp({ password: 'the right one' });
    const good = await signIn(t, me.email.toUpperCase(), 'the right one');
    expect(good.statusCode, good.body).toBe(200);
    expect(good.json().data.user).toEqual({ id: me.userId, email: me.email, role: 'admin' });
    expect(sessionCookieOf(good)).toEqual(expect.any(String));
    expect(sessionCookieOf(good)).not.toBe(me.token);

    const wrong = await signIn(t, me.email, 'the wrong one');
    expectInternalError(wrong, { status: 401, type: 'unauthorized', detail: 'Invalid email or password' });
    expect(setCookieOf(wrong)).toBeUndefined();
    const nobody = await signIn(t, uniqueEmail('nobody'), 'whatever');
    expectInternalError(nobody, { status: 401, type: 'unauthorized', detail: 'Invalid email or password' });
  });

  it('sign-in is limited to 10 attempts per 15 minutes per client address', async () => {
    const address = freshAddress();
    for (let i = 0; i < 10; i++) {
      const res = await signIn(t, uniqueEmail('spray'), 'guess', address);
      expect(res.statusCode).toBe(401);
    }
    const eleventh = await signIn(t, uniqueEmail('spray'), 'guess', address);
    expectInternalError(eleventh, { status: 429, type: 'rate_limited' });
    expect(Number(eleventh.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(eleventh.headers['retry-after'])).toBeLessThanOrEqual(90);
    // Another address is not affected.
    expect((await signIn(t, uniqueEmail('spray'), 'guess')).statusCode).toBe(401);
  });

  it('sign-in is limited to 10 attempts per 15 minutes per email, from any address', async () => {
    const me = await t.signUp({ password: 'the right one' });
    for (let i = 0; i < 10; i++) expect((await signIn(t, me.email, 'guess')).statusCode).toBe(401);
    const eleventh = await signIn(t, me.email.toUpperCase(), 'the right one');
    expectInternalError(eleventh, { status: 429, type: 'rate_limited' });
    expect(eleventh.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('sign-up and sign-in require Content-Type: application/json (a cross-site form cannot send it)', async () => {
    for (const url of ['/internal/auth/sign-up', '/internal/auth/sign-in']) {
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
      ]) {
        const res = await t.app.inject({
          method: 'POST',
          url,
          headers: { 'content-type': type },
          payload: 'email=a%40b.c&password=x',
        });
        expectInternalError(res, { status: 415, type: 'unsupported_media_type' });
      }
      expectInternalError(await t.app.inject({ method: 'POST', url }), { status: 415 });
    }
  });

  it('validates the sign-up body with field errors', async () => {
    const res = await signUpRequest(t, {
      email: 'not-an-email',
      password: 'short',
      organization_name: '',
      extra: 1,
    });
    const error = expectInternalError(res, { status: 400, type: 'validation_error' });
    const byField = Object.fromEntries(error.fields!.map((f) => [f.field, f.code]));
    expect(byField).toMatchObject({
      email: 'invalid_value',
      password: 'too_short',
      organization_name: 'too_short',
      extra: 'unknown_field',
    });
    const blank = await signUpRequest(t, {
      email: uniqueEmail(),
      password: 'long enough',
      organization_name: '   ',
    });
    expectInternalError(blank, { status: 400, type: 'validation_error' });
  });

  it('without a cookie /internal/ answers 401; a bad or foreign cookie too, and clears it', async () => {
    expectInternalError(await t.app.inject({ method: 'GET', url: '/internal/session' }), {
      status: 401,
      type: 'unauthorized',
      detail: 'Not signed in',
    });
    const garbage = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: 'other=1; tagtrail_session=not.a.jwt' },
    });
    expectInternalError(garbage, { status: 401, type: 'unauthorized' });
    expect(setCookieOf(garbage)).toMatch(/^tagtrail_session=; .*Max-Age=0/);
  });

  it('sign-out revokes the session at once and clears the cookie', async () => {
    const me = await t.signUp();
    const other = await signIn(t, me.email, 'correct horse battery');
    expect(other.statusCode).toBe(200);
    const out = await me.post('/internal/auth/sign-out', {});
    expect(out.statusCode, out.body).toBe(204);
    expect(setCookieOf(out)).toMatch(/^tagtrail_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
    expectInternalError(await me.get('/internal/session'), { status: 401, type: 'unauthorized' });
    // Only that session: the other sign-in still works.
    const still = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: `tagtrail_session=${sessionCookieOf(other)}` },
    });
    expect(still.statusCode).toBe(200);
  });

  it('sign-out without a body and without a content type works too', async () => {
    const me = await t.signUp();
    const out = await me.request({ method: 'POST', url: '/internal/auth/sign-out' });
    expect(out.statusCode, out.body).toBe(204);
  });

  it('an expired session is refused: by its row, and by its token', async () => {
    const me = await t.signUp();
    expect((await me.get('/internal/session')).statusCode).toBe(200);
    await t.database.db.pool.query(
      `UPDATE web_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`,
      [me.userId],
    );
    expectInternalError(await me.get('/internal/session'), { status: 401, type: 'unauthorized' });

    const fresh = await t.services.internal.sessions.create(me.orgId, me.userId);
    const claims = JSON.parse(Buffer.from(fresh.token.split('.')[1]!, 'base64url').toString());
    const expiredToken = await t.services.tokens.sign({
      use: 'session',
      id: claims.sub,
      orgId: me.orgId,
      scopes: [],
      expiresAt: Math.floor(Date.now() / 1000) - 10,
    });
    const res = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: `tagtrail_session=${expiredToken}` },
    });
    expectInternalError(res, { status: 401, type: 'unauthorized' });
  });

  it('password change: checks the current password, revokes the other sessions, keeps this one', async () => {
    const me = await t.signUp({ password: 'first password' });
    const otherRes = await signIn(t, me.email, 'first password');
    const other = browser(t.app, sessionCookieOf(otherRes)!, otherRes.json().data.csrf_token, me);

    const wrong = await me.post('/internal/auth/password', {
      current_password: 'not it at all',
      new_password: 'second password',
    });
    const error = expectInternalError(wrong, { status: 400, type: 'validation_error' });
    expect(error.fields).toEqual([
      expect.objectContaining({ field: 'current_password', code: 'invalid_value' }),
    ]);
    const short = await me.post('/internal/auth/password', {
      current_password: 'first password',
      new_password: 'x',
    });
    expectInternalError(short, { status: 400, type: 'validation_error' });

    const ok = await me.post('/internal/auth/password', {
      current_password: 'first password',
      new_password: 'second password',
    });
    expect(ok.statusCode, ok.body).toBe(204);
    expect((await me.get('/internal/session')).statusCode).toBe(200);
    expectInternalError(await other.get('/internal/session'), { status: 401 });
    expect((await signIn(t, me.email, 'first password')).statusCode).toBe(401);
    expect((await signIn(t, me.email, 'second password')).statusCode).toBe(200);
  });

  it('a state-changing call without the CSRF token, or with a wrong one, gets 403 and changes nothing', async () => {
    const me = await t.signUp({ password: 'first password' });
    const someone = await t.signUp();
    for (const csrf of [null, '', 'wrong', someone.csrf, `${me.csrf}x`, me.csrf.toLowerCase()]) {
      if (csrf === me.csrf) continue;
      const res = await me.request({
        method: 'POST',
        url: '/internal/auth/password',
        csrf,
        headers: json,
        payload: JSON.stringify({ current_password: 'first password', new_password: 'second password' }),
      });
      expectInternalError(res, {
        status: 403,
        type: 'forbidden',
        detail: 'Missing or invalid X-CSRF-Token header',
      });
    }
    const signOut = await me.request({ method: 'POST', url: '/internal/auth/sign-out', csrf: null });
    expectInternalError(signOut, { status: 403, type: 'forbidden' });
    expect((await me.get('/internal/session')).statusCode).toBe(200);
    expect((await signIn(t, me.email, 'first password')).statusCode).toBe(200);
    // GET needs none, and the token of /internal/session is the one that works.
    const token = (await me.get('/internal/session')).json().data.csrf_token;
    expect(token).toBe(me.csrf);
  });

  it('unknown /internal/ paths get the 404 envelope, undeclared methods 405, neither with rate-limit headers', async () => {
    const me = await t.signUp();
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/internal/nothing-here' }),
      await me.get('/internal/nothing-here?x=1'),
      await me.post('/internal/keys/x/y', {}),
    ]) {
      expectInternalError(res, { status: 404, type: 'not_found' });
    }
    const res = await me.request({ method: 'PUT', url: '/internal/session' });
    expectInternalError(res, { status: 405, type: '405' });
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('unknown query parameters are refused', async () => {
    const me = await t.signUp();
    const res = await me.get('/internal/session?foo=1');
    const error = expectInternalError(res, { status: 400, type: 'validation_error' });
    expect(error.fields).toEqual([expect.objectContaining({ field: 'foo', code: 'unknown_field' })]);
  });
});

describe('behind a TLS-terminating proxy (TAGTRAIL_TRUST_PROXY=true)', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'open', trustProxy: true });
  });
  afterAll(() => t.close());

  it('marks the cookie Secure when X-Forwarded-Proto is https, and not otherwise', async () => {
    const send = (proto?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/internal/auth/sign-up',
        headers: {
          ...json,
          'x-forwarded-for': freshAddress(),
          ...(proto ? { 'x-forwarded-proto': proto } : {}),
        },
        payload: JSON.stringify({ email: uniqueEmail(), password: 'long enough', organization_name: 'P' }),
      });
    const secure = await send('https');
    expect(setCookieOf(secure)!.split('; ')).toContain('Secure');
    // The device cookie too (test/internal/device-cookie.test.ts).
    const device = [secure.headers['set-cookie']].flat().find((c) => c?.startsWith('tagtrail_device='));
    expect(device?.split('; ')).toContain('Secure');
    expect(setCookieOf(await send('http'))!.split('; ')).not.toContain('Secure');
    expect(setCookieOf(await send())!.split('; ')).not.toContain('Secure');
  });

  it('counts sign-in attempts per forwarded client address', async () => {
    const address = freshAddress();
    const attempt = (from: string) =>
      t.app.inject({
        method: 'POST',
        url: '/internal/auth/sign-in',
        headers: { ...json, 'x-forwarded-for': from },
        payload: JSON.stringify({ email: uniqueEmail(), password: 'guess' }),
      });
    for (let i = 0; i < 10; i++) expect((await attempt(address)).statusCode).toBe(401);
    expect((await attempt(address)).statusCode).toBe(429);
    expect((await attempt(freshAddress())).statusCode).toBe(401);
  });

  it('counts the address the proxy added, not the X-Forwarded-For entries the client sent before it', async () => {
    const client = freshAddress();
    // A proxy that appends ($proxy_add_x_forwarded_for) keeps what the client sent first.
    const spoofing = () =>
      t.app.inject({
        method: 'POST',
        url: '/internal/auth/sign-up',
        headers: { ...json, 'x-forwarded-for': `${freshAddress()}, ${client}` },
        payload: JSON.stringify({ email: uniqueEmail(), password: 'long enough', organization_name: 'P' }),
      });
    for (let i = 0; i < SIGN_UP_POLICY.limit; i++) expect((await spoofing()).statusCode).toBe(201);
    expect((await spoofing()).statusCode).toBe(429);
  });
});
