import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { cliCaller } from '../../src/caller.js';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { AUTH_DETAIL } from '../../src/keys/authenticate.js';
import type { ApiKeyCache } from '../../src/keys/key-cache.js';
import { createServices, type Services } from '../../src/services.js';
import { bearer, buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

/**
 * API key records are cached per instance (src/keys/key-cache.ts); revocation must still
 * take effect on the very next request on every instance sharing the database, and losing
 * the LISTEN connection must never leave a revoked key accepted.
 */

/** Waits for `condition`, calling `poke` (a request) between looks. */
async function until(condition: () => boolean, what: string, poke: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await poke();
    await new Promise((r) => setTimeout(r, 20));
  }
}

const me = (app: App, token: string) =>
  app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(token) });

function cacheOf(services: Services): ApiKeyCache {
  const cache = services.authenticator.cache;
  if (!cache) throw new Error('the service has no API key cache');
  return cache;
}

/** A key that `app` has authenticated from its cache (listener up, record held). */
async function warm(app: App, services: Services, org: TestOrg) {
  const key = await org.key();
  // The first request starts the listener; the record is cached once it listens.
  const poke = () => me(app, key.token);
  await until(() => cacheOf(services).listening, 'the listener', poke);
  await until(() => cacheOf(services).has(key.id), 'the cached record', poke);
  const res = await me(app, key.token);
  expect(res.statusCode).toBe(200);
  return key;
}

describe('API key cache across instances', () => {
  let t: TestApp;
  let secondDb: Database;
  let second: Services;
  let secondApp: App;

  beforeAll(async () => {
    t = await buildTestApp();
    // A second instance: its own pool, services and server on the same database.
    secondDb = createDatabase(t.database.url, { max: 4 });
    second = await createServices(secondDb, {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1_000_000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
    });
    secondApp = await buildServer(second, { bodyLimit: 1048576 });
    await secondApp.ready();
  });

  afterAll(async () => {
    await secondApp?.close();
    await second?.close();
    await secondDb?.close();
    await t?.close();
  });

  it('refuses a key revoked on one instance on the next request to the other, every time', async () => {
    const org = await t.createOrg();
    for (let i = 0; i < 15; i++) {
      const key = await warm(secondApp, second, org);
      await t.services.keys.revoke(cliCaller(org.id), key.id);
      const res = await me(secondApp, key.token);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.detail).toBe(AUTH_DETAIL.revoked);
    }
  });

  it('refuses a revoked key on the instance that revoked it', async () => {
    const org = await t.createOrg();
    const key = await warm(t.app, t.services, org);
    await t.services.keys.revoke(cliCaller(org.id), key.id);
    expect((await me(t.app, key.token)).json().error.detail).toBe(AUTH_DETAIL.revoked);
  });

  it('keeps serving a key that was not revoked, from the cache', async () => {
    const org = await t.createOrg();
    const kept = await warm(secondApp, second, org);
    const revoked = await warm(secondApp, second, org);
    await t.services.keys.revoke(cliCaller(org.id), revoked.id);
    expect((await me(secondApp, kept.token)).statusCode).toBe(200);
    expect(cacheOf(second).has(kept.id)).toBe(true);
    expect(cacheOf(second).has(revoked.id)).toBe(false);
  });

  it("shows an organization's new name on the next request to either instance", async () => {
    // No route renames an organization today; an operator's UPDATE must still be seen at once.
    const org = await t.createOrg('Before');
    const first = await warm(t.app, t.services, org);
    const other = await warm(secondApp, second, org);
    for (const name of ['After', 'After again']) {
      await t.database.db.pool.query('UPDATE organizations SET name = $2 WHERE id = $1', [org.id, name]);
      expect((await me(t.app, first.token)).json().data.name).toBe(name);
      expect((await me(secondApp, other.token)).json().data.name).toBe(name);
    }
  });
});

describe('API key cache when the LISTEN connection is lost', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await buildTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('refuses a key revoked right after the listener was killed, and listens again', async () => {
    const org = await t.createOrg();
    const cache = cacheOf(t.services);
    for (let i = 0; i < 3; i++) {
      const key = await warm(t.app, t.services, org);
      const pid = cache.listenerPid;
      expect(pid).toBeTypeOf('number');
      const killed = await t.database.db.pool.query<{ ok: boolean }>(
        'SELECT pg_terminate_backend($1) AS ok',
        [pid],
      );
      expect(killed.rows[0]!.ok).toBe(true);
      // No wait for the instance to notice: the revocation's notification can no longer reach it.
      await t.services.keys.revoke(cliCaller(org.id), key.id);
      const res = await me(t.app, key.token);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.detail).toBe(AUTH_DETAIL.revoked);
      expect(cache.has(key.id)).toBe(false);
      // The next key is cached again once a new listener is up (warm waits for that).
    }
  });

  it('drops the whole cache while it has no listener', async () => {
    const org = await t.createOrg();
    const cache = cacheOf(t.services);
    const a = await warm(t.app, t.services, org);
    const b = await warm(t.app, t.services, org);
    await t.database.db.pool.query('SELECT pg_terminate_backend($1)', [cache.listenerPid]);
    await until(
      () => !cache.listening,
      'the loss to be noticed',
      () => me(t.app, a.token),
    );
    expect(cache.has(a.id)).toBe(false);
    expect(cache.has(b.id)).toBe(false);
    // Meanwhile keys are read from the database: still accepted, still refused once revoked.
    expect((await me(t.app, a.token)).statusCode).toBe(200);
    await t.services.keys.revoke(cliCaller(org.id), b.id);
    expect((await me(t.app, b.token)).json().error.detail).toBe(AUTH_DETAIL.revoked);
  });
});
