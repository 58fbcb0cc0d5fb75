import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertLocation,
  postSignedOut,
} from './helpers.js';

/**
 * PostgreSQL cannot store U+0000 in text: a NUL in a string the web app's routes take must
 * be the caller's 400 on that field, never a 500 (22021) or a 503 (the connection dropped
 * when the value rode inlined in a transaction's opening). Found by an audit.
 */
const NUL = '\u0000';

function expectNulRefused(res: LightMyRequestResponse, field: string, params: Record<string, unknown> = {}) {
  const error = expectInternalError(res, { status: 400, type: 'validation_error' });
  expect(error.fields, res.body).toEqual([
    { field, code: 'invalid_value', message: `${field} must not contain U+0000`, params },
  ]);
}

describe('a NUL in an /internal/ input is a 400 on its field', () => {
  let t: InternalTestApp;
  let me: Browser;
  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp({ password: 'correct horse battery' });
  });
  afterAll(() => t.close());

  it('sign-up, on organization_name and on email, with no session', async () => {
    const valid = {
      email: 'nul@example.test',
      password: 'correct horse battery',
      organization_name: 'Depot',
    };
    expectNulRefused(
      await postSignedOut(t, '/internal/auth/sign-up', { ...valid, organization_name: `De${NUL}pot` }),
      'organization_name',
    );
    expectNulRefused(
      await postSignedOut(t, '/internal/auth/sign-up', { ...valid, email: `nul${NUL}@example.test` }),
      'email',
    );
  });

  it('sign-in, on email, with no session', async () => {
    expectNulRefused(
      await postSignedOut(t, '/internal/auth/sign-in', {
        email: `${me.email}${NUL}`,
        password: 'correct horse battery',
      }),
      'email',
    );
  });

  it("a key's name, an invitation's email, a new email, a webhook's url", async () => {
    expectNulRefused(
      await me.post('/internal/keys', { name: `x${NUL}y`, scopes: [], expires_at: null }),
      'name',
    );
    expectNulRefused(
      await me.post('/internal/invitations', { email: `new${NUL}@example.test`, role: 'viewer' }),
      'email',
    );
    expectNulRefused(
      await me.post('/internal/auth/email', {
        current_password: 'correct horse battery',
        new_email: `moved${NUL}@example.test`,
      }),
      'new_email',
    );
    expectNulRefused(
      await me.post('/internal/webhooks', {
        url: `https://example.com/${NUL}`,
        event_types: ['asset.moved'],
      }),
      'url',
    );
  });

  it("the handheld's tags: of an item, and of the location", async () => {
    const site = await insertLocation(t, me.orgId, { external_key: 'SITE', name: 'Site' });
    expectNulRefused(
      await me.post('/internal/handheld', { location: { id: site }, items: [{ tag: `x${NUL}y` }] }),
      'items[0].tag',
    );
    expectNulRefused(
      await me.post('/internal/handheld', { location: { tag: `x${NUL}y` }, items: [{ tag: 'A' }] }),
      'location.tag',
    );
  });

  it("the activity log's filters, in the query string", async () => {
    expectNulRefused(await me.get('/internal/activity?actor_type=user&actor_id=x%00'), 'actor_id');
    expectNulRefused(await me.get('/internal/activity?record_type=asset&record_id=x%00'), 'record_id');
  });

  it('every offending string at once, a repeated query parameter by its position, and a key', async () => {
    const res = await me.post('/internal/handheld', {
      location: { tag: NUL },
      items: [{ tag: 'fine' }, { tag: `b${NUL}` }],
    });
    const error = expectInternalError(res, { status: 400, type: 'validation_error' });
    expect(error.fields?.map((f) => f.field)).toEqual(['location.tag', 'items[1].tag']);

    expectNulRefused(await me.get('/internal/assets?external_key=A&external_key=b%00'), 'external_key', {
      index: 1,
    });

    const key = await me.post('/internal/keys', { name: 'k', scopes: [], [`expires${NUL}`]: null });
    const keyError = expectInternalError(key, { status: 400, type: 'validation_error' });
    expect(keyError.fields).toEqual([
      {
        field: `expires${NUL}`,
        code: 'invalid_value',
        message: `expires${NUL} must not contain U+0000 in its name`,
        params: {},
      },
    ]);
  });

  it("an upload's query, while its streamed body is left to the import", async () => {
    const res = await me.request({
      method: 'POST',
      url: '/internal/import/assets?dry_run=true%00',
      headers: { 'content-type': 'text/csv' },
      payload: 'external_key,name\nA,B\n',
    });
    expectNulRefused(res, 'dry_run');
  });

  it('a body nested deeper than the call stack is walked too', async () => {
    const depth = 20_000;
    const res = await me.request({
      method: 'POST',
      url: '/internal/keys',
      headers: { 'content-type': 'application/json' },
      payload: `{"name":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)},"scopes":[],"expires_at":null}`,
    });
    const error = expectInternalError(res, { status: 400, type: 'validation_error' });
    expect(error.fields?.map((f) => f.field)).toEqual([`name${'[0]'.repeat(depth)}`]);
  });

  it('many at once leave the service answering: no connection is lost', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => me.get('/internal/activity?actor_type=user&actor_id=x%00')),
    );
    expect(new Set(answers.map((r) => r.statusCode))).toEqual(new Set([400]));
    expect((await me.get('/internal/keys')).statusCode).toBe(200);
  });

  it('the public API keeps its own per-field rules', async () => {
    const { token } = (
      await me.post('/internal/keys', { name: 'api', scopes: ['assets:write'], expires_at: null })
    ).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: `x${NUL}y` }),
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.fields).toEqual([
      expect.objectContaining({
        field: 'name',
        code: 'invalid_value',
        message:
          'name must be a single line with no control characters and no leading or trailing whitespace',
      }),
    ]);
  });
});
