import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVITATION_POLICY, SIGN_UP_POLICY } from '../../src/accounts/sign-in-limiter.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { rawRequest, requestBytes } from '../helpers/raw-http.js';
import { ingestFixture } from '../ingest/helpers.js';
import { buildInternalApp, freshAddress, type InternalTestApp, uniqueEmail } from '../internal/helpers.js';

/** Issue 9 item 6: sign-up limited per client address, the reader webhook per reader. */

function expectRateLimited(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.json().error).toMatchObject({ type: 'rate_limited', status: 429, title: 'Too Many Requests' });
  expect(res.json().error.request_id).toBe(res.headers['x-request-id']);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('sign-up per client address', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'open' });
  });
  afterAll(() => t.close());

  const signUp = (remoteAddress: string) =>
    t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-up',
      remoteAddress,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        email: uniqueEmail(),
        password: 'correct horse battery',
        organization_name: 'Abuse',
      }),
    });

  it(`allows ${SIGN_UP_POLICY.limit} at once from one address, then 429 with Retry-After; other addresses are not affected`, async () => {
    const address = freshAddress();
    for (let i = 0; i < SIGN_UP_POLICY.limit; i++) expect((await signUp(address)).statusCode).toBe(201);
    const organizations = Number(
      (await t.database.db.pool.query('SELECT count(*) FROM organizations')).rows[0].count,
    );
    const refused = await signUp(address);
    expectRateLimited(refused);
    expect(Number((await t.database.db.pool.query('SELECT count(*) FROM organizations')).rows[0].count)).toBe(
      organizations,
    );
    expect((await signUp(freshAddress())).statusCode).toBe(201);
  });
});

describe('invitations per organization', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'open' });
  });
  afterAll(() => t.close());

  const invitationsOf = async (orgId: number) =>
    Number(
      (await t.database.db.pool.query('SELECT count(*) FROM invitations WHERE org_id = $1', [orgId])).rows[0]
        .count,
    );

  it(`allows ${INVITATION_POLICY.limit} invitations and resends at once, then 429 without saying whether the address has an account; other organizations are not affected`, async () => {
    const admin = await t.signUp();
    const elsewhere = await t.signUp();
    const inviteNew = (by = admin) =>
      by.post('/internal/invitations', { email: uniqueEmail('invited'), role: 'viewer' });
    const first = await inviteNew();
    expect(first.statusCode, first.body).toBe(201);
    expect((await admin.post(`/internal/invitations/${first.json().data.id}/resend`)).statusCode).toBe(200);
    for (let i = 2; i < INVITATION_POLICY.limit; i++) {
      const res = await inviteNew();
      expect(res.statusCode, res.body).toBe(201);
    }
    const sent = await invitationsOf(admin.orgId);
    expectRateLimited(await inviteNew());
    // An address with an account elsewhere gets the same 429, not the 409 that would confirm it.
    expectRateLimited(await admin.post('/internal/invitations', { email: elsewhere.email, role: 'viewer' }));
    expectRateLimited(await admin.post(`/internal/invitations/${first.json().data.id}/resend`));
    expect(await invitationsOf(admin.orgId)).toBe(sent);
    const other = await inviteNew(elsewhere);
    expect(other.statusCode, other.body).toBe(201);
  });
});

describe('reader webhook per reader', () => {
  let t: TestApp;
  const LIMIT = 3;
  const body = readFileSync(new URL('../fixtures/readers/impinj-r700/webhook-array.json', import.meta.url));
  beforeAll(async () => {
    t = await buildTestApp({ webhookRateLimit: LIMIT });
  });
  afterAll(() => t.close());

  const post = (readerId: number, secret: string) =>
    t.app.inject({
      method: 'POST',
      url: `/ingest/v1/readers/${readerId}/messages`,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      payload: body,
    });

  it('answers 429 once a reader spent its budget, stores nothing of the refused message, and leaves other readers alone', async () => {
    const f = await ingestFixture(t);
    const location = await f.location();
    const busy = await f.reader('impinj-r700', [[1, location]], { webhook: true });
    const other = await f.reader('impinj-r700', [[1, location]], { webhook: true });
    for (let i = 0; i < LIMIT; i++) expect((await post(busy.reader.id, busy.secret!)).statusCode).toBe(204);
    const refused = await post(busy.reader.id, busy.secret!);
    expectRateLimited(refused);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(await f.rawMessages(busy.reader.id)).toHaveLength(LIMIT);
    expect((await post(other.reader.id, other.secret!)).statusCode).toBe(204);
  });

  it('a wrong secret does not spend the reader’s budget', async () => {
    const f = await ingestFixture(t);
    const reader = await f.reader('impinj-r700', [[1, await f.location()]], { webhook: true });
    for (let i = 0; i < LIMIT + 2; i++)
      expect((await post(reader.reader.id, 'wrong-secret')).statusCode).toBe(401);
    expect((await post(reader.reader.id, reader.secret!)).statusCode).toBe(204);
  });

  it('answers 429 before reading the body of the refused message', async () => {
    const f = await ingestFixture(t);
    const busy = await f.reader('impinj-r700', [[1, await f.location()]], { webhook: true });
    for (let i = 0; i < LIMIT; i++) expect((await post(busy.reader.id, busy.secret!)).statusCode).toBe(204);
    const port = await listenOnLoopback(t.app);
    // A tenth of the announced body sent, the connection left open: only an answer given before
    // the body is read arrives (rawRequest fails otherwise).
    const refused = await rawRequest(
      port,
      requestBytes(
        `POST /ingest/v1/readers/${busy.reader.id}/messages HTTP/1.1`,
        {
          authorization: `Bearer ${busy.secret}`,
          'content-type': 'application/json',
          'content-length': String(body.length * 10),
        },
        body.toString('utf8'),
      ),
      { timeoutMs: 5_000 },
    );
    expect(refused.status, refused.body).toBe(429);
    expect(refused.json).toMatchObject({ error: { type: 'rate_limited', status: 429 } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(await f.rawMessages(busy.reader.id)).toHaveLength(LIMIT);
  });
});
