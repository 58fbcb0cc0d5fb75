import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/app.js';
import { databaseReadiness } from '../../src/http/health.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';

/** /healthz and /readyz: outside /api/, no authentication, no rate limit, JSON bodies. */
describe('health endpoints', () => {
  let t: TestApp;
  let brokerUp = true;

  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers /healthz 200 without credentials or rate-limit headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz 200 with the database check by default', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('answers other methods 405 with Allow, in the envelope', async () => {
    for (const url of ['/healthz', '/readyz']) {
      const res = await t.app.inject({ method: 'POST', url });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.json().error).toMatchObject({ type: '405', status: 405, instance: url });
    }
  });

  it('is not part of the public API: not in the OpenAPI document, not among the public routes', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(Object.keys(doc.paths)).not.toContain('/healthz');
    expect(Object.keys(doc.paths)).not.toContain('/readyz');
    expect(t.app.publicRoutes.map((r) => r.url)).not.toContain('/readyz');
  });

  it('answers /readyz 503 with Retry-After naming the failing check', async () => {
    const app = await buildServer(t.services, {
      bodyLimit: 1048576,
      readiness: [
        databaseReadiness(t.database.db),
        { name: 'broker', check: async () => brokerUp },
        { name: 'broken', check: () => Promise.reject(new Error('a check that throws counts as down')) },
      ],
    });
    try {
      brokerUp = false;
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toEqual({
        status: 'not_ready',
        checks: { database: 'ok', broker: 'unavailable', broken: 'unavailable' },
      });
      // Unknown paths beside them keep the envelope.
      expectErrorEnvelope(await t.app.inject({ method: 'GET', url: '/api/readyz' }), { status: 404 });
    } finally {
      await app.close();
    }
  });
});
