import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { AUTH_DETAIL } from '../../src/keys/authenticate.js';
import type { ApiKeyCache } from '../../src/keys/key-cache.js';
import type { Services } from '../../src/services.js';
import { bearer, buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';

/**
 * A request admitted on a cached key record does not wait for the LISTEN barrier: its
 * first transaction reads the key again in its own snapshot (src/keys/authenticate.ts,
 * `confirmation`). These tests change keys with the notification trigger disabled, so the
 * cache is never told: only that in-transaction check can notice.
 */

const me = (app: App, token: string) =>
  app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(token) });

function cacheOf(services: Services): ApiKeyCache {
  const cache = services.authenticator.cache;
  if (!cache) throw new Error('the service has no API key cache');
  return cache;
}

async function until(condition: () => boolean, what: string, poke: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await poke();
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a cached key is confirmed inside the work transaction', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    t = await buildTestApp();
    t.services.authenticator.confirmInTransaction = true;
    org = await t.createOrg();
  });

  afterAll(async () => {
    await t?.close();
  });

  async function warm(scopes?: string[]) {
    const key = await org.key(scopes);
    const poke = () => me(t.app, key.token);
    await until(() => cacheOf(t.services).listening, 'the listener', poke);
    await until(() => cacheOf(t.services).has(key.id), 'the cached record', poke);
    return key;
  }

  /** Changes a key the way no notification reports (the trigger off for this transaction). */
  async function silently(sql: string, params: unknown[]) {
    const client = await t.database.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE api_keys DISABLE TRIGGER api_key_changed');
      await client.query(sql, params);
      await client.query('ALTER TABLE api_keys ENABLE TRIGGER api_key_changed');
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }

  it('refuses a read with a key revoked behind the cache', async () => {
    const key = await warm();
    await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    expect(cacheOf(t.services).has(key.id)).toBe(true);
    const res = await me(t.app, key.token);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.detail).toBe(AUTH_DETAIL.revoked);
    expect(cacheOf(t.services).has(key.id)).toBe(false);
  });

  it('refuses a write with a key revoked behind the cache, and nothing of it stays', async () => {
    const key = await warm();
    await silently('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: bearer(key.token),
      payload: { name: 'Smuggled', external_key: 'SMUGGLED-1' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.detail).toBe(AUTH_DETAIL.revoked);
    const left = await t.database.db.pool.query('SELECT 1 FROM assets WHERE org_id = $1 AND name = $2', [
      org.id,
      'Smuggled',
    ]);
    expect(left.rowCount).toBe(0);
  });

  it('answers with the scopes the database has when they changed behind the cache', async () => {
    const key = await warm(['assets:read']);
    await silently('UPDATE api_keys SET scopes = $2 WHERE id = $1', [
      key.id,
      ['assets:read', 'tracking:read'],
    ]);
    const res = await me(t.app, key.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.scopes).toEqual(['assets:read', 'tracking:read']);
  });

  it('admits a scope granted behind the cache and refuses one taken away', async () => {
    const key = await warm(['assets:read']);
    await silently('UPDATE api_keys SET scopes = $2 WHERE id = $1', [key.id, ['locations:read']]);
    const locations = await t.app.inject({
      method: 'GET',
      url: '/api/v1/locations',
      headers: bearer(key.token),
    });
    expect(locations.statusCode).toBe(200);
    const assets = await t.app.inject({ method: 'GET', url: '/api/v1/assets', headers: bearer(key.token) });
    expect(assets.statusCode).toBe(403);
  });

  it('keeps serving an unchanged key from the cache', async () => {
    const key = await warm();
    for (let i = 0; i < 3; i++) expect((await me(t.app, key.token)).statusCode).toBe(200);
    expect(cacheOf(t.services).has(key.id)).toBe(true);
  });
});
