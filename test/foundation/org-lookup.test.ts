import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';

describe('GET /api/v1/orgs/me', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('returns the organization, the key scopes and the key id', async () => {
    const org = await t.createOrg('Acme');
    const key = await org.key(['assets:read', 'tracking:read']);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: { id: org.id, name: 'Acme', scopes: ['assets:read', 'tracking:read'], api_key_id: key.id },
    });
  });

  it('needs no scope: a key minted with none works', async () => {
    const org = await t.createOrg();
    const key = await org.key([]);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.scopes).toEqual([]);
  });

  it('rejects any query parameter with unknown_field', async () => {
    const key = await (await t.createOrg()).key();
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/orgs/me?limit=5',
      headers: bearer(key.token),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.fields).toEqual([
      { field: 'limit', code: 'unknown_field', message: 'unknown query parameter: limit', params: {} },
    ]);
  });

  it('rejects a web session token with 401', async () => {
    const org = await t.createOrg();
    const session = await t.services.tokens.sign({
      use: 'session',
      id: '00000000-0000-4000-8000-000000000001',
      orgId: org.id,
      scopes: [],
    });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(session) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.detail).toBe('Invalid or expired token');
  });
});
