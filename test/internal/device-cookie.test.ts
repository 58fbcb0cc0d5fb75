import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from './auth-requests.js';
import {
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
  uniqueEmail,
} from './helpers.js';

const PASSWORD = 'the right one';

/** The `tagtrail_device` Set-Cookie line of a response, if any. */
function deviceSetCookie(res: LightMyRequestResponse): string | undefined {
  const h = res.headers['set-cookie'];
  const lines = Array.isArray(h) ? h : h === undefined ? [] : [h];
  return lines.find((line) => line.startsWith('tagtrail_device='));
}

const deviceOf = (res: LightMyRequestResponse) =>
  /^tagtrail_device=([^;]*)/.exec(deviceSetCookie(res) ?? '')?.[1];

/**
 * Device cookies (OWASP "Slow down online guessing attacks with device cookies",
 * docs/web-app.md "Sessions and CSRF"): a stranger spending an email's sign-in budget does
 * not lock out a browser that has signed in as it before.
 */
describe('sign-in with a device cookie', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'open' });
  });
  afterAll(() => t.close());

  const signIn = (email: string, password: string, device?: string, address = freshAddress()) =>
    t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: address,
      headers: device === undefined ? json : { ...json, cookie: `tagtrail_device=${device}` },
      payload: JSON.stringify({ email, password }),
    });

  /**
   * A stranger's wrong passwords, each from an address of its own, until the email's budget
   * (what the person's own sign-ins left of ten) is spent: then even the right one is 429.
   */
  async function exhaustEmail(email: string): Promise<void> {
    let refused: LightMyRequestResponse | undefined;
    for (let i = 0; i <= 10 && !refused; i++) {
      const res = await signIn(email, 'a guess');
      if (res.statusCode === 429) refused = res;
      else expect(res.statusCode).toBe(401);
    }
    expect(refused).toBeDefined();
    expectInternalError(await signIn(email, PASSWORD), { status: 429, type: 'rate_limited' });
  }

  /** A person who signed in once from their browser; the device cookie that sign-in set. */
  async function signedInBefore(): Promise<{ email: string; device: string }> {
    const me = await t.signUp({ password: PASSWORD });
    const res = await signIn(me.email, PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    return { email: me.email, device: deviceOf(res)! };
  }

  it('a sign-in sets it after the session cookie: HttpOnly, SameSite=Strict, a year, sent to sign-in only', async () => {
    const me = await t.signUp({ password: PASSWORD });
    const res = await signIn(me.email, PASSWORD);
    expect(sessionCookieOf(res)).toEqual(expect.any(String));
    const attributes = deviceSetCookie(res)!.split('; ');
    expect(attributes[0]).toMatch(/^tagtrail_device=[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(attributes.slice(1)).toEqual(
      expect.arrayContaining([
        'Path=/internal/auth/sign-in',
        'Max-Age=31536000',
        'HttpOnly',
        'SameSite=Strict',
      ]),
    );
    expect(attributes).not.toContain('Secure');
    // Each sign-in gets a new one; a wrong password gets none.
    expect(deviceOf(await signIn(me.email, PASSWORD))).not.toBe(deviceOf(res));
    expect(deviceSetCookie(await signIn(me.email, 'a guess'))).toBeUndefined();
  });

  it('a stranger spending the email’s budget from elsewhere does not stop the person’s own browser', async () => {
    const { email, device } = await signedInBefore();
    await exhaustEmail(email);
    const res = await signIn(email.toUpperCase(), PASSWORD, device);
    expect(res.statusCode, res.body).toBe(200);
    expect(sessionCookieOf(res)).toEqual(expect.any(String));
    // Without the cookie the email's limit holds, as before.
    expectInternalError(await signIn(email, PASSWORD), { status: 429, type: 'rate_limited' });
  });

  it('sign-up and accepting an invitation set one too', async () => {
    const signUp = await t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-up',
      remoteAddress: freshAddress(),
      headers: json,
      payload: JSON.stringify({ email: uniqueEmail('dev'), password: PASSWORD, organization_name: 'Dev' }),
    });
    expect(signUp.statusCode, signUp.body).toBe(201);
    const email = signUp.json().data.user.email;
    await exhaustEmail(email);
    expect((await signIn(email, PASSWORD, deviceOf(signUp))).statusCode).toBe(200);

    const admin = await t.signUp();
    const invited = uniqueEmail('invited');
    const issued = await admin.post('/internal/invitations', { email: invited, role: 'viewer' });
    expect(issued.statusCode, issued.body).toBe(201);
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      remoteAddress: freshAddress(),
      headers: json,
      payload: JSON.stringify({ token: issued.json().token, password: PASSWORD }),
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
    await exhaustEmail(invited);
    expect((await signIn(invited, PASSWORD, deviceOf(accepted))).statusCode).toBe(200);
  });

  it('a forged, unknown or another person’s device cookie gives no exemption', async () => {
    const { email, device } = await signedInBefore();
    const other = await signedInBefore();
    await exhaustEmail(email);
    const [nonce, expiry, mac] = device.split('.') as [string, string, string];
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    for (const presented of [
      other.device,
      `${nonce}.${expiry}.${flipped}`,
      `${nonce}.${Number(expiry) + 1}.${mac}`,
      `${'x'.repeat(22)}.${expiry}.${mac}`,
      `${nonce}.${expiry}.${'A'.repeat(43)}`,
      `${device}.x`,
      'x',
    ]) {
      expectInternalError(await signIn(email, PASSWORD, presented), { status: 429, type: 'rate_limited' });
    }
    // The genuine one still works; the other person's still works for them.
    expect((await signIn(email, PASSWORD, device)).statusCode).toBe(200);
    expect((await signIn(other.email, PASSWORD, other.device)).statusCode).toBe(200);
  });

  it('a device cookie has a bucket of its own: 10 attempts per 15 minutes, from any address', async () => {
    const { email, device } = await signedInBefore();
    for (let i = 0; i < 10; i++) expect((await signIn(email, 'a guess', device)).statusCode).toBe(401);
    const eleventh = await signIn(email, PASSWORD, device);
    expectInternalError(eleventh, { status: 429, type: 'rate_limited' });
    expect(Number(eleventh.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(eleventh.headers['retry-after'])).toBeLessThanOrEqual(90);
    // Those attempts were the device's, not the email's: the password alone still signs in.
    expect((await signIn(email, PASSWORD)).statusCode).toBe(200);
  });

  it('the client address limit holds with a device cookie too', async () => {
    const { email, device } = await signedInBefore();
    const address = freshAddress();
    for (let i = 0; i < 10; i++) {
      expect((await signIn(uniqueEmail('spray'), 'a guess', undefined, address)).statusCode).toBe(401);
    }
    expectInternalError(await signIn(email, PASSWORD, device, address), {
      status: 429,
      type: 'rate_limited',
    });
  });

  it('a signed-in password change is limited per session, not by the email a stranger spent', async () => {
    const me = await t.signUp({ password: PASSWORD });
    await exhaustEmail(me.email);
    const change = (current: string) =>
      me.request({
        method: 'POST',
        url: '/internal/auth/password',
        remoteAddress: freshAddress(),
        headers: json,
        payload: JSON.stringify({ current_password: current, new_password: 'a new password' }),
      });
    for (let i = 0; i < 9; i++) expect((await change('not it at all')).statusCode).toBe(400);
    expect((await change(PASSWORD)).statusCode).toBe(204);
    expectInternalError(await change('a new password'), { status: 429, type: 'rate_limited' });
  });
});
