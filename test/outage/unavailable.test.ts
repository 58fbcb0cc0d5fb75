import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { cliCaller } from '../../src/caller.js';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { DatabaseUnavailableError } from '../../src/db/unavailable.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { createServices, type Services } from '../../src/services.js';
import { bearer } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase, untilSessions } from '../helpers/database.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * The request path while the database is unreachable, made unreachable through a proxy
 * the test breaks: every outage is a 503 in the envelope with Retry-After, never a 500 or
 * a hang, and the same process serves again once the database is back.
 */
describe('requests while the database is unreachable', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Database;
  let services: Services;
  let app: App;
  let token: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    // Shorter bounds than production's DATABASE_TIMEOUTS so the silent-network cases finish
    // sooner, yet long enough that a healthy connect or query on a loaded machine (CI, or
    // seven test runs at once) is not taken for an outage.
    db = createDatabase(url.toString(), { max: 5, connectTimeoutMs: 3_000, queryTimeoutMs: 5_000 });
    services = await createServices(
      db,
      {
        TAGTRAIL_ENV: 'production',
        secrets: TEST_SECRETS,
        REDIS_URL: undefined,
        TAGTRAIL_RATE_LIMIT: 1_000_000,
        TAGTRAIL_RATE_WINDOW_SECONDS: 60,
      },
      new MemoryRateLimitStore({ limit: 1_000_000, windowSeconds: 60 }),
    );
    app = await buildServer(services, { bodyLimit: 1048576 });
    await app.ready();
    const org = await services.organizations.create('Outage Org');
    token = (await services.keys.mint({ caller: cliCaller(org.id), scopes: ['assets:read', 'assets:write'] }))
      .token;
    const user = await services.internal.accounts.operatorUser(org.id);
    const issued = await services.internal.sessions.create(org.id, user.id);
    cookie = `tagtrail_session=${issued.token}`;
    csrf = issued.csrfToken;
  });

  afterAll(async () => {
    await app?.close();
    await services?.close();
    await db?.close().catch(() => undefined);
    await proxy?.close();
    await database?.drop();
  });

  const listAssets = () => app.inject({ method: 'GET', url: '/api/v1/assets', headers: bearer(token) });
  const createAsset = (name: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: JSON.stringify({ name }),
    });
  const internalAssets = () => app.inject({ method: 'GET', url: '/internal/assets', headers: { cookie } });
  const signIn = () =>
    app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'nobody@example.test', password: 'not the password' }),
    });

  const expect503 = (res: Awaited<ReturnType<typeof listAssets>>, surface: 'api' | 'internal') => {
    if (surface === 'api') {
      expectErrorEnvelope(res, { status: 503, type: 'service_unavailable' });
    } else {
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error).toMatchObject({ type: 'service_unavailable', status: 503 });
    }
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).not.toMatch(/ECONNREFUSED|terminated|timeout|127\.0\.0\.1/);
  };

  it('answers 503 with Retry-After while connections are refused, and 2xx once the database is back', async () => {
    expect((await listAssets()).statusCode).toBe(200);
    await proxy.down();
    expect503(await listAssets(), 'api');
    expect503(await createAsset('during outage'), 'api');
    expect503(await internalAssets(), 'internal');
    expect503(await signIn(), 'internal');
    await proxy.up();
    expect((await listAssets()).statusCode).toBe(200);
    expect((await createAsset('after outage')).statusCode).toBe(201);
    expect((await internalAssets()).statusCode).toBe(200);
  });

  it('answers 503 within the connect bound when the database host goes silent', async () => {
    // Idle pooled connections would be reused; a silent host must also bound new ones.
    await proxy.down();
    await proxy.up();
    proxy.blackhole();
    expect503(await listAssets(), 'api');
    expect503(await createAsset('silent'), 'api');
    await proxy.up();
    expect((await listAssets()).statusCode).toBe(200);
  });

  it('fails a transaction whose connection is cut mid-query without an uncaught error', async () => {
    const running = db.withOrg(1, (tx) => tx.query('SELECT pg_sleep(10)'));
    const outcome = running.then(
      () => 'committed',
      (err: unknown) => err,
    );
    // The query must be running on the server before the connection is cut.
    await untilSessions(
      database.db,
      "state = 'active' AND query = 'SELECT pg_sleep(10)'",
      'the query running',
    );
    await proxy.down();
    expect(await outcome).toBeInstanceOf(DatabaseUnavailableError);
    await proxy.up();
    expect((await createAsset('after cut')).statusCode).toBe(201);
  });

  it('gives up on a query the silent server never answers and serves again afterwards', async () => {
    await proxy.up();
    expect((await listAssets()).statusCode).toBe(200); // a pooled connection is open now
    proxy.blackhole();
    expect503(await listAssets(), 'api');
    await proxy.up();
    expect((await listAssets()).statusCode).toBe(200);
  });

  it('keeps /healthz 200 and turns /readyz 503 while the database is down', async () => {
    await proxy.down();
    const live = await app.inject({ method: 'GET', url: '/healthz' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    const notReady = await app.inject({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode, notReady.body).toBe(503);
    expect(notReady.headers['retry-after']).toBe('5');
    expect(notReady.json()).toEqual({ status: 'not_ready', checks: { database: 'unavailable' } });
    await proxy.up();
    // A result is reused for a second; wait it out rather than assume how long that is.
    let ready = await app.inject({ method: 'GET', url: '/readyz' });
    for (const deadline = Date.now() + 20_000; ready.statusCode !== 200 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await app.inject({ method: 'GET', url: '/readyz' });
    }
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  it('reports an outage from ping and recovers', async () => {
    await proxy.down();
    await expect(db.ping(500)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await proxy.up();
    // Recovery is what is checked, not its speed: a bound a loaded machine will not reach.
    await expect(db.ping(10_000)).resolves.toBeUndefined();
  });

  it('keeps the CSRF-protected writes of /internal/ in the envelope too', async () => {
    await proxy.down();
    const res = await app.inject({
      method: 'POST',
      url: '/internal/keys',
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x', scopes: [] }),
    });
    expect503(res, 'internal');
    await proxy.up();
  });
});
