import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * Issue 9 item 8: the OpenAPI document declares the response headers per operation, and
 * actual responses carry what it declares.
 */
type JsonObject = Record<string, unknown>;
type Header = { required?: boolean; schema?: JsonObject };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, Header> }> }>>;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const RATE_LIMIT = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, responses: op.responses })),
  );

let t: TestApp;
let doc: Doc;
let token: string;
beforeAll(async () => {
  t = await buildTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  token = (await (await t.createOrg()).key()).token;
});
afterAll(() => t.close());

/** Every header the document declares as required for this response's status is on it, and the rate-limit ones. */
function expectDocumented(method: string, path: string, res: LightMyRequestResponse): void {
  const response = doc.paths[path]?.[method]?.responses[String(res.statusCode)];
  expect(response, `${method.toUpperCase()} ${path} documents ${res.statusCode}`).toBeDefined();
  const declared = response!.headers ?? {};
  for (const [name, header] of Object.entries(declared)) {
    if (header.required)
      expect(res.headers[name.toLowerCase()], `${name} on ${res.statusCode}`).toBeDefined();
  }
  for (const name of RATE_LIMIT) expect(res.headers[name.toLowerCase()], name).toMatch(/^\d+$/);
  for (const name of Object.keys(declared)) {
    if (declared[name]?.schema?.type === 'integer' && res.headers[name.toLowerCase()] !== undefined) {
      expect(String(res.headers[name.toLowerCase()]), name).toMatch(/^\d+$/);
    }
  }
}

describe('the document', () => {
  it('declares x-request-id and the X-RateLimit-* headers on every response of every operation', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(10);
    for (const { method, path, responses } of ops) {
      for (const [status, response] of Object.entries(responses)) {
        const headers = response.headers ?? {};
        expect(headers['x-request-id'], `${method} ${path} ${status}`).toMatchObject({ required: true });
        for (const name of RATE_LIMIT)
          expect(headers[name], `${method} ${path} ${status} ${name}`).toBeDefined();
      }
    }
  });

  it('declares Location on every 201, Retry-After on 429 and 503, Allow on 405', () => {
    let creates = 0;
    for (const { method, path, responses } of operations(doc)) {
      for (const [status, header] of [
        ['201', 'Location'],
        ['429', 'Retry-After'],
        ['503', 'Retry-After'],
        ['405', 'Allow'],
      ] as const) {
        if (!responses[status]) continue;
        if (status === '201') creates++;
        expect(responses[status]!.headers?.[header], `${method} ${path} ${status} ${header}`).toMatchObject({
          required: true,
        });
      }
      for (const status of ['405', '429', '503'])
        expect(responses, `${method} ${path}`).toHaveProperty(status);
    }
    expect(creates).toBeGreaterThanOrEqual(3);
  });
});

describe('responses carry what the document declares', () => {
  const json = (body: unknown) => ({
    payload: JSON.stringify(body),
    headers: { ...bearer(token), 'content-type': 'application/json' },
  });

  it('415 of a body in a content coding: Accept-Encoding, declared on the 415 of every write', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/locations',
      payload: JSON.stringify({ name: 'Gz' }),
      headers: { ...bearer(token), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(415);
    expectDocumented('post', '/api/v1/locations', res);
    expect(res.headers['accept-encoding']).toBe('identity');
    for (const { method, path, responses } of operations(doc)) {
      if (method !== 'post' && method !== 'patch') continue;
      expect(responses['415']?.headers?.['Accept-Encoding'], `${method} ${path}`).toMatchObject({
        required: false,
      });
    }
  });

  it('201 of every create: Location, x-request-id, rate-limit headers', async () => {
    const asset = await t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      ...json({ name: 'Hdr asset' }),
    });
    expectDocumented('post', '/api/v1/assets', asset);
    expect(asset.headers.location).toBe(`/api/v1/assets/${asset.json().data.id}`);
    const location = await t.app.inject({
      method: 'POST',
      url: '/api/v1/locations',
      ...json({ name: 'Hdr loc' }),
    });
    expectDocumented('post', '/api/v1/locations', location);
    const tag = await t.app.inject({
      method: 'POST',
      url: `/api/v1/assets/${asset.json().data.id}/tags`,
      ...json({ tag_type: 'rfid', value: `E${Date.now()}` }),
    });
    expectDocumented('post', '/api/v1/assets/{asset_id}/tags', tag);
    expect(tag.headers.location).toMatch(/^\/api\/v1\/assets\/\d+\/tags\/\d+$/);
  });

  it('200, 401, 404 and 405 (with Allow)', async () => {
    expectDocumented(
      'get',
      '/api/v1/orgs/me',
      await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(token) }),
    );
    expectDocumented('get', '/api/v1/orgs/me', await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me' }));
    expectDocumented(
      'get',
      '/api/v1/assets/{asset_id}',
      await t.app.inject({ method: 'GET', url: '/api/v1/assets/2147483646', headers: bearer(token) }),
    );
    const notAllowed = await t.app.inject({ method: 'PUT', url: '/api/v1/assets', headers: bearer(token) });
    expect(notAllowed.statusCode).toBe(405);
    expectDocumented('get', '/api/v1/assets', notAllowed);
  });

  it('429 with Retry-After', async () => {
    const limited = await buildTestApp({
      rateLimit: new MemoryRateLimitStore({ limit: 1, windowSeconds: 3600 }),
    });
    try {
      const key = (await (await limited.createOrg()).key()).token;
      await limited.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key) });
      const res = await limited.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(key) });
      expect(res.statusCode).toBe(429);
      expectDocumented('get', '/api/v1/orgs/me', res);
    } finally {
      await limited.close();
    }
  });
});
