/**
 * TAGTRAIL_PUBLIC_URL=https://… says people reach the service over https, usually through a
 * TLS proxy. When that proxy is not trusted (no TAGTRAIL_TRUST_PROXY) every request looks
 * like plain HTTP to the service, yet its cookies must still be Secure, or a browser sends
 * them in the clear to any http:// page of the host.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from './auth-requests.js';
import { buildInternalApp, freshAddress, type InternalTestApp, uniqueEmail } from './helpers.js';

const cookieLines = (res: LightMyRequestResponse) => [res.headers['set-cookie'] ?? []].flat();

describe.each([
  ['https://tracking.depot.example', true],
  ['http://tracking.depot.example', false],
])('with TAGTRAIL_PUBLIC_URL=%s behind a proxy that is not trusted', (publicUrl, secure) => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'open', publicUrl });
  });
  afterAll(() => t.close());

  it(`${secure ? 'marks' : 'does not mark'} the session and device cookies Secure, set and cleared`, async () => {
    const signedUp = await t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-up',
      headers: { ...json, 'x-forwarded-for': freshAddress() },
      payload: JSON.stringify({ email: uniqueEmail(), password: 'long enough', organization_name: 'P' }),
    });
    expect(signedUp.statusCode).toBe(201);
    const lines = cookieLines(signedUp);
    expect(lines.map((l) => l.split('=')[0]).sort()).toEqual(['tagtrail_device', 'tagtrail_session']);

    // A session cookie that is no longer valid is cleared by the answer refusing it.
    const refused = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: 'tagtrail_session=not-a-session' },
    });
    expect(refused.statusCode).toBe(401);
    lines.push(...cookieLines(refused));
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.split('; ').includes('Secure'), line).toBe(secure);
  });
});
