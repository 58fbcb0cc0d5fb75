import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInternalApp, expectInternalError, type InternalTestApp } from './helpers.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('/internal/keys', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp();
  });
  afterAll(() => t.close());

  it('mints a key shown once, which works against the public API until it is revoked', async () => {
    const me = await t.signUp();
    const minted = await me.post('/internal/keys', {
      name: 'Warehouse sync',
      scopes: ['tracking:read', 'assets:read', 'assets:read'],
      expires_at: null,
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const { data, token } = minted.json();
    expect(data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Warehouse sync',
      scopes: ['assets:read', 'tracking:read'],
      created_at: expect.stringMatching(/\.\d{3}Z$/),
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
      status: 'active',
      created_by: { id: me.userId, email: me.email, removed: false },
    });
    expect(token).toEqual(expect.any(String));

    const me1 = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(token) });
    expect(me1.statusCode, me1.body).toBe(200);
    expect(me1.json().data).toEqual({
      id: me.orgId,
      name: expect.any(String),
      scopes: ['assets:read', 'tracking:read'],
      api_key_id: data.id,
    });

    const list = await me.get('/internal/keys');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      data: [expect.objectContaining({ id: data.id })],
      limit: 50,
      offset: 0,
      total_count: 1,
    });
    expect(JSON.stringify(list.json())).not.toContain(token);
    const { rows } = await t.database.db.pool.query('SELECT created_by_user_id FROM api_keys WHERE id = $1', [
      data.id,
    ]);
    expect(rows[0].created_by_user_id).toBe(me.userId);

    const revoked = await me.post(`/internal/keys/${data.id}/revoke`, {});
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().data).toMatchObject({
      id: data.id,
      status: 'revoked',
      revoked_at: expect.any(String),
    });
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(token) });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.detail).toBe('API key has been revoked');
    // Revoking again keeps the first revocation time.
    const again = await me.post(`/internal/keys/${data.id}/revoke`, {});
    expect(again.json().data.revoked_at).toBe(revoked.json().data.revoked_at);
  });

  it('refuses keys:admin and unknown scopes with validation_error', async () => {
    const me = await t.signUp();
    for (const scopes of [['keys:admin'], ['assets:read', 'keys:admin'], ['assets:delete']]) {
      const res = await me.post('/internal/keys', { name: 'k', scopes, expires_at: null });
      const error = expectInternalError(res, { status: 400, type: 'validation_error' });
      expect(error.fields).toEqual([expect.objectContaining({ field: 'scopes', code: 'invalid_value' })]);
    }
    expect((await me.get('/internal/keys')).json().total_count).toBe(0);
  });

  it('takes expires_at in the future (RFC 3339) or null', async () => {
    const me = await t.signUp();
    const at = new Date(Date.now() + 30 * 86400_000);
    at.setUTCMilliseconds(0);
    const res = await me.post('/internal/keys', {
      name: 'thirty days',
      scopes: [],
      expires_at: at.toISOString().replace('Z', '+00:00'),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.expires_at).toBe(at.toISOString());
    expect(res.json().data.status).toBe('active');
    const claims = JSON.parse(Buffer.from(res.json().token.split('.')[1], 'base64url').toString());
    expect(claims.exp * 1000).toBe(at.getTime());

    for (const expires_at of [new Date(Date.now() - 1000).toISOString(), '2020-01-01T00:00:00Z']) {
      const past = await me.post('/internal/keys', { name: 'past', scopes: [], expires_at });
      const error = expectInternalError(past, { status: 400, type: 'validation_error' });
      expect(error.fields).toEqual([expect.objectContaining({ field: 'expires_at', code: 'invalid_value' })]);
    }
    for (const expires_at of ['tomorrow', '2030-13-01T00:00:00Z', 12]) {
      const bad = await me.post('/internal/keys', { name: 'bad', scopes: [], expires_at });
      expectInternalError(bad, { status: 400, type: 'validation_error' });
    }
    const missing = await me.post('/internal/keys', { name: 'no expiry given', scopes: [] });
    expectInternalError(missing, { status: 400, type: 'validation_error' });
  });

  it('reports expired keys as expired', async () => {
    const me = await t.signUp();
    const res = await me.post('/internal/keys', {
      name: 'soon',
      scopes: [],
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    await t.database.db.pool.query(
      `UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`,
      [res.json().data.id],
    );
    const list = await me.get('/internal/keys');
    expect(list.json().data[0].status).toBe('expired');
  });

  it('pages the list', async () => {
    const me = await t.signUp();
    for (const name of ['one', 'two', 'three']) {
      expect((await me.post('/internal/keys', { name, scopes: [], expires_at: null })).statusCode).toBe(201);
    }
    const page = await me.get('/internal/keys?limit=2&offset=1');
    expect(page.json()).toMatchObject({ limit: 2, offset: 1, total_count: 3 });
    expect(page.json().data).toHaveLength(2);
    expectInternalError(await me.get('/internal/keys?limit=500'), { status: 400, type: 'validation_error' });
  });
});
