/**
 * The shared HTTP contract's method and media type rules (API-SPEC 415 rules, 405 and HEAD, and
 * 404 for unknown routes), checked on every route in `app.publicRoutes`, so a route added later
 * is covered without touching this file.
 */
import { METHODS } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { HTTPMethods, InjectOptions, LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PublicRoute } from '../../src/http/plugins/methods.js';
import { bearer } from '../helpers/app.js';
import { expectErrorEnvelope, expectSurfaceHeaders } from '../helpers/error-envelope.js';
import { BODY_LIMIT } from './probe-requests.js';
import {
  callRoute,
  concreteUrl,
  contractApps,
  expectStoppedAtQuery,
  expectUnauthorized,
  ORIGIN,
  type RouteChange,
  UNKNOWN_QUERY,
} from './route-contract-requests.js';

const COMMON_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Every method Node's parser takes, the uncommon ones included (CONNECT too: see request-target.test.ts). */
const ALL_METHODS = [...COMMON_METHODS, ...METHODS.filter((m) => !COMMON_METHODS.includes(m))];

const { real, targets } = await contractApps();

for (const { name, t, routes } of targets) {
  describe(name, () => {
    let fullKey: string;
    beforeAll(async () => {
      fullKey = (await (await t.createOrg()).key()).token;
    });
    const call = (route: PublicRoute, change?: RouteChange) => callRoute(t, fullKey, route, change);

    for (const route of routes) {
      describe(`${route.method} ${route.url}`, () => {
        if (route.method === 'GET') {
          const parity = async (headers: Record<string, string | undefined>) => {
            const get = await call(route, { headers });
            const head = await call(route, { method: 'HEAD', headers });
            expect(head.statusCode).toBe(get.statusCode);
            expect(head.body).toBe('');
            const comparable = (res: LightMyRequestResponse) => {
              const h = { ...res.headers };
              for (const k of ['x-request-id', 'date', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
                delete h[k];
              return h;
            };
            expect(comparable(head)).toEqual(comparable(get));
            expectSurfaceHeaders(head);
            return get;
          };

          it('HEAD answers as GET does, with an empty body', async () => {
            const get = await parity({});
            expectSurfaceHeaders(get);
            if (get.statusCode >= 400) expectErrorEnvelope(get);
          });

          it('HEAD without credentials answers as GET does (401), with an empty body', async () => {
            expectUnauthorized(await parity({ authorization: undefined }), 'Missing authorization header');
          });
        }

        if (route.method === 'POST') {
          it.each([
            ['no Content-Type', undefined],
            ['text/plain', 'text/plain'],
            ['application/merge-patch+json', 'application/merge-patch+json'],
            ['multipart/form-data', 'multipart/form-data; boundary=x'],
            ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
            ['application/jsonx', 'application/jsonx'],
          ])('POST with %s: 415 unsupported_media_type', async (_name, type) => {
            expectErrorEnvelope(await call(route, { headers: { 'content-type': type } }), {
              status: 415,
              type: 'unsupported_media_type',
            });
          });

          it('POST with no Content-Type and no body: 415', async () => {
            expectErrorEnvelope(await call(route, { headers: { 'content-type': undefined }, payload: '' }), {
              status: 415,
              type: 'unsupported_media_type',
            });
          });

          it('POST with application/json; charset=utf-8 is accepted', async () => {
            expectStoppedAtQuery(
              await call(route, {
                headers: { 'content-type': 'application/json; charset=utf-8' },
                query: UNKNOWN_QUERY,
              }),
            );
          });
        }

        if (route.method === 'PATCH') {
          it.each([
            ['application/json', 'application/json'],
            ['no Content-Type', undefined],
            ['text/plain', 'text/plain'],
            ['multipart/form-data', 'multipart/form-data; boundary=x'],
          ])('PATCH with %s: 415 unsupported_media_type', async (_name, type) => {
            expectErrorEnvelope(await call(route, { headers: { 'content-type': type } }), {
              status: 415,
              type: 'unsupported_media_type',
            });
          });

          it('PATCH with application/merge-patch+json; charset=utf-8 is accepted', async () => {
            expectStoppedAtQuery(
              await call(route, {
                headers: { 'content-type': 'application/merge-patch+json; charset=utf-8' },
                query: UNKNOWN_QUERY,
              }),
            );
          });
        }

        if (route.method === 'POST' || route.method === 'PATCH') {
          const type = route.method === 'POST' ? 'application/json' : 'application/merge-patch+json';
          it.each([
            ['gzip', 'gzip', gzipSync('{}')],
            ['gzip over a plain body', 'gzip', '{}'],
            ['br', 'br', '{}'],
            ['a chain with identity', 'identity, gzip', gzipSync('{}')],
          ])(
            'a body in a content coding (%s): 415 with Accept-Encoding: identity',
            async (_name, coding, payload) => {
              const res = await call(route, {
                headers: { 'content-type': type, 'content-encoding': coding },
                payload,
              });
              const error = expectErrorEnvelope(res, { status: 415, type: 'unsupported_media_type' });
              expect(error.detail).toMatch(/^Content-Encoding .* is not accepted/);
              expect(res.headers['accept-encoding']).toBe('identity');
            },
          );

          it('Content-Encoding: identity is accepted', async () => {
            expectStoppedAtQuery(
              await call(route, {
                headers: { 'content-type': type, 'content-encoding': 'identity' },
                query: UNKNOWN_QUERY,
              }),
            );
          });
        }

        if (route.method !== 'POST' && route.method !== 'PATCH') {
          it('multipart/form-data: 415 unsupported_media_type', async () => {
            expectErrorEnvelope(
              await call(route, {
                headers: { 'content-type': 'multipart/form-data; boundary=x' },
                payload: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
              }),
              { status: 415, type: 'unsupported_media_type' },
            );
          });
        }

        if (route.method === 'DELETE') {
          it.each([
            ['no Content-Type', undefined, undefined],
            ['application/json', 'application/json', '{}'],
            ['application/json with an unparseable body', 'application/json', 'not json'],
            ['application/merge-patch+json', 'application/merge-patch+json', '{}'],
            ['text/plain', 'text/plain', 'hello'],
            ['application/xml', 'application/xml', '<a/>'],
            ['a Content-Type that is no media type', 'garbage', 'x'],
            ['a media type without a subtype', 'text', 'x'],
          ])('DELETE with %s is not 415', async (_name, type, payload) => {
            expectStoppedAtQuery(
              await call(route, { headers: { 'content-type': type }, query: UNKNOWN_QUERY, payload }),
            );
          });
        }
      });
    }

    // 405: per path, every method it does not declare.
    const declaredByPath = new Map<string, Set<string>>();
    for (const route of routes) {
      const set = declaredByPath.get(route.url) ?? new Set<string>();
      set.add(route.method);
      if (route.method === 'GET') set.add('HEAD');
      declaredByPath.set(route.url, set);
    }
    for (const [url, declared] of declaredByPath) {
      describe(`${url} (405 for undeclared methods)`, () => {
        const undeclared = ALL_METHODS.filter((m) => !declared.has(m));
        it('declares GET, or HEAD is undeclared too', () => {
          expect(declared.has('HEAD')).toBe(declared.has('GET'));
        });
        if (undeclared.length === 0) return;
        it.each(undeclared.map((m) => [m]))(
          '%s: 405 with Allow listing exactly the declared methods',
          async (method) => {
            for (const headers of [{}, { ...bearer(fullKey), 'content-type': 'text/plain' }]) {
              const res = await t.app.inject({
                method: method as HTTPMethods,
                url: concreteUrl(url),
                headers: { ...ORIGIN, 'access-control-request-method': 'GET', ...headers },
                ...(method === 'GET' || method === 'HEAD' ? {} : { payload: 'x' }),
              });
              expect(res.statusCode).toBe(405);
              const allow = String(res.headers.allow ?? '')
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean);
              expect(allow.sort()).toEqual([...declared].sort());
              if (method === 'HEAD') {
                expect(res.body).toBe('');
                expectSurfaceHeaders(res);
              } else {
                expectErrorEnvelope(res, { status: 405, type: '405' });
              }
            }
          },
        );
        it('405 wins over the 413 of a body over the limit and the 415 of a Content-Type that is no media type', async () => {
          const method = undeclared.find((m) => m !== 'GET' && m !== 'HEAD') ?? 'PUT';
          for (const [type, payload] of [
            ['application/json', 'x'.repeat(BODY_LIMIT + 1)],
            ['garbage', 'x'],
          ]) {
            const res = await t.app.inject({
              method: method as HTTPMethods,
              url: concreteUrl(url),
              headers: { ...bearer(fullKey), 'content-type': type },
              payload,
            });
            expectErrorEnvelope(res, { status: 405, type: '405' });
          }
        });
        it('405 wins over the 415 a declared write would get (no Content-Type)', async () => {
          const write = undeclared.find((m) => m === 'POST' || m === 'PATCH') ?? 'PUT';
          const res = await t.app.inject({
            method: write as HTTPMethods,
            url: concreteUrl(url),
            payload: '{}',
          });
          expectErrorEnvelope(res, { status: 405, type: '405' });
        });
      });
    }
  });
}

describe('unknown routes', () => {
  const cases: [HTTPMethods, string, InjectOptions['headers']?, string?][] = [
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v1/nope?x=1'],
    ['DELETE', '/api/v1/nope'],
    ['POST', '/api/v1/nope'],
    ['POST', '/api/v1/nope', { 'content-type': 'application/json' }, 'not json'],
    ['PATCH', '/api/v1/nope', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--'],
    ['GET', '/api/v1/orgs/me/'],
    ['GET', '/api/v1/orgs/me/extra'],
    ['GET', '/api/v1/'],
    ['GET', '/api/v2/orgs/me'],
    ['POST', '/api/v1/nope', { 'content-type': 'garbage' }, 'x'],
    ['PUT', '/api/v1/nope', { 'content-type': 'application/json' }, 'x'.repeat(BODY_LIMIT + 1)],
  ];
  it.each(cases)('%s %s: 404 envelope with rate-limit headers', async (method, url, headers, payload) => {
    for (const auth of [{}, { authorization: 'Bearer garbage' }]) {
      const res = await real.app.inject({
        method,
        url,
        headers: { ...ORIGIN, ...auth, ...headers },
        ...(payload === undefined ? {} : { payload }),
      });
      expectErrorEnvelope(res, { status: 404, type: 'not_found' });
    }
  });
});
