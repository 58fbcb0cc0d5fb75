/**
 * The shared HTTP contract (API-SPEC Authentication, Errors, 415 rules, Limits, 405 and
 * HEAD), checked on every route in `app.publicRoutes`, so a route added later is covered
 * without touching this file. Probe routes (test/helpers/probe-routes.ts) stand in for the
 * POST, PATCH and DELETE endpoints that do not exist yet.
 */
import type { HTTPMethods, InjectOptions, LightMyRequestResponse } from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublicRoute } from '../../src/http/plugins/methods.js';
import type { TokenClaims } from '../../src/keys/tokens.js';
import { ALL_SCOPES, bearer, buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';
import {
  expectErrorEnvelope,
  expectSurfaceHeaders,
  expectValidationError,
} from '../helpers/error-envelope.js';
import { probeRoutes } from '../helpers/probe-routes.js';

const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const MAX_ID = 2147483647;
/** Sent on every request: CORS is disabled, so even a browser origin gets no CORS header. */
const ORIGIN = { origin: 'https://browser.example' };

/**
 * Request bodies that pass schema validation, for routes whose body the sample generator
 * below cannot derive from the OpenAPI document. Key: `METHOD /url`.
 */
const SAMPLE_BODIES: Record<string, unknown> = {};

const real = await buildTestApp();
const probed = await buildTestApp({ routes: [probeRoutes] });
afterAll(async () => {
  await real.close();
  await probed.close();
});

// ---------------------------------------------------------------------------------------
// Request building

const PARAM = /:([A-Za-z0-9_]+)/g;

function paramsOf(url: string): string[] {
  return [...url.matchAll(PARAM)].map((m) => m[1]!);
}

/** The route's URL with every path parameter set to a valid id (1), or to `override`. */
function concreteUrl(url: string, override: Record<string, string> = {}): string {
  return url.replace(PARAM, (_m, name: string) => override[name] ?? '1');
}

const contentTypeFor = (method: string): Record<string, string> =>
  method === 'POST'
    ? { 'content-type': 'application/json' }
    : method === 'PATCH'
      ? { 'content-type': 'application/merge-patch+json' }
      : {};

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
};

/** A value valid against `schema`: required keys only, the smallest fitting values. */
function sampleOf(schema: Schema, doc: { components?: { schemas?: Record<string, Schema> } }): unknown {
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop()!;
    return sampleOf(doc.components?.schemas?.[name] ?? {}, doc);
  }
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[k])) return sampleOf((schema[k] as Schema[])[0]!, doc);
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => sampleOf(s, doc) as object));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((k) => [k, sampleOf(schema.properties?.[k] ?? {}, doc)]),
      );
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => sampleOf(schema.items ?? {}, doc));
    case 'integer':
    case 'number':
      return Math.max(Number(schema.minimum ?? 1), 1);
    case 'boolean':
      return true;
    case 'string': {
      if (schema.format === 'date-time') return '2024-01-02T03:04:05.000Z';
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000001';
      const min = Number(schema.minLength ?? 1);
      const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
      const candidates = ['Sample1', 'a', 'A', '1', 'sample-1', 'x'].map((c) => c.padEnd(min, c[0]));
      return candidates.find((c) => !pattern || pattern.test(c)) ?? candidates[0];
    }
    default:
      return {};
  }
}

function sampleBody(t: TestApp, route: PublicRoute): unknown {
  const key = `${route.method} ${route.url}`;
  if (key in SAMPLE_BODIES) return SAMPLE_BODIES[key];
  const doc = t.app.swagger() as {
    components?: { schemas?: Record<string, Schema> };
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: Schema }> } }>>;
  };
  const op = doc.paths[route.url.replace(PARAM, '{$1}')]?.[route.method.toLowerCase()];
  const content = Object.values(op?.requestBody?.content ?? {})[0];
  return content ? sampleOf(content.schema, doc) : {};
}

// ---------------------------------------------------------------------------------------
// Credentials

interface Credentials {
  org: TestOrg;
  /** Every mintable scope. */
  full: string;
  expiredJwt: string;
  expiredRecord: string;
  revoked: string;
  session: string;
  sessionNamingKey: string;
  previewMinted: string;
  signedForPreview: string;
  productionSignedPreviewRecord: string;
  foreignKey: string;
  algNone: string;
  tampered: string;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function credentials(t: TestApp): Promise<Credentials> {
  const org = await t.createOrg();
  const full = await org.key();
  const claimsOf = (id: string): TokenClaims => ({ use: 'api_key', id, orgId: org.id, scopes: ALL_SCOPES });
  const pastSeconds = Math.floor(Date.now() / 1000) - 3600;

  // A real record with a short expiry, moved into the past, and a token whose exp has passed.
  const shortLived = await org.key(ALL_SCOPES, { expiresInSeconds: 60 });
  await t.database.db.pool.query('UPDATE api_keys SET expires_at = to_timestamp($2) WHERE id = $1', [
    shortLived.id,
    pastSeconds,
  ]);
  const expiredJwt = await t.services.tokens.sign({ ...claimsOf(shortLived.id), expiresAt: pastSeconds });
  // The record expired while the token it was minted with still carries a future exp.
  const recordOnly = await org.key(ALL_SCOPES, { expiresInSeconds: 3600 });
  await t.database.db.pool.query(
    "UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1",
    [recordOnly.id],
  );

  const revoked = await org.key();
  await t.services.keys.revoke(org.id, revoked.id);

  const preview = await t.services.keys.mint({ orgId: org.id, scopes: ALL_SCOPES, environment: 'preview' });

  const foreign = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const foreignKey = await new SignJWT({ org: org.id, scp: ALL_SCOPES, use: 'api_key' })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer('tagtrail')
    .setAudience('tagtrail:production')
    .setSubject(full.id)
    .setIssuedAt()
    .sign(foreign.privateKey);
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    org: org.id,
    scp: ALL_SCOPES,
    use: 'api_key',
    iss: 'tagtrail',
    aud: 'tagtrail:production',
  };
  const algNone = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ ...payload, sub: full.id, iat: now })}.`;
  // A genuine token whose payload names another organization; the signature no longer fits.
  const [head, , signature] = full.token.split('.');
  const tampered = `${head}.${b64url({ ...payload, org: org.id + 1000, sub: full.id, iat: now })}.${signature}`;

  return {
    org,
    full: full.token,
    expiredJwt,
    expiredRecord: recordOnly.token,
    revoked: revoked.token,
    session: await t.services.tokens.sign({
      ...claimsOf('00000000-0000-4000-8000-000000000001'),
      use: 'session',
    }),
    sessionNamingKey: await t.services.tokens.sign({ ...claimsOf(full.id), use: 'session' }),
    previewMinted: preview.token,
    signedForPreview: await t.services.tokens.sign(claimsOf(full.id), 'preview'),
    productionSignedPreviewRecord: await t.services.tokens.sign(claimsOf(preview.key.id)),
    foreignKey,
    algNone,
    tampered,
  };
}

// ---------------------------------------------------------------------------------------
// The per-route checks

function defineRouteContract(name: string, t: TestApp, routes: PublicRoute[]): void {
  describe(name, () => {
    let creds: Credentials;
    beforeAll(async () => {
      creds = await credentials(t);
    });

    it('has routes to check', () => {
      expect(routes.length).toBeGreaterThan(0);
    });

    /** The route called correctly (valid key, content type, schema-valid body), then `change`d. */
    async function call(
      route: PublicRoute,
      change: {
        method?: string;
        url?: string;
        query?: string;
        headers?: Record<string, string | undefined>;
        payload?: string;
      } = {},
    ): Promise<LightMyRequestResponse> {
      const method = change.method ?? route.method;
      const headers: Record<string, string> = { ...ORIGIN, ...bearer(creds.full), ...contentTypeFor(method) };
      for (const [k, v] of Object.entries(change.headers ?? {})) {
        if (v === undefined) delete headers[k];
        else headers[k] = v;
      }
      const url = (change.url ?? concreteUrl(route.url)) + (change.query ? `?${change.query}` : '');
      const options: InjectOptions = { method: method as HTTPMethods, url, headers };
      if (change.payload !== undefined) options.payload = change.payload;
      else if (method === 'POST' || method === 'PATCH')
        options.payload = JSON.stringify(sampleBody(t, route));
      return t.app.inject(options);
    }

    /** Requests that get past authentication and content negotiation, then stop at the query. */
    const UNKNOWN_QUERY = 'contract_probe_unknown=1';

    function expectStoppedAtQuery(res: LightMyRequestResponse): void {
      const fields = expectValidationError(res);
      expect(fields[0], 'a schema-valid sample body is needed; add one to SAMPLE_BODIES').toMatchObject({
        field: 'contract_probe_unknown',
        code: 'unknown_field',
      });
    }

    for (const route of routes) {
      const label = `${route.method} ${route.url}`;
      const unauthorized = (res: LightMyRequestResponse, detail?: string) =>
        expectErrorEnvelope(res, { status: 401, type: 'unauthorized', ...(detail ? { detail } : {}) });

      describe(label, () => {
        it('requires authentication (declares config.scopes)', () => {
          expect(route.scopes).toBeInstanceOf(Array);
        });

        it('no Authorization header: 401 Missing authorization header', async () => {
          unauthorized(
            await call(route, { headers: { authorization: undefined } }),
            'Missing authorization header',
          );
        });

        it.each([['Basic xyz'], ['Bearer'], ['Bearer '], ['Token abc.def.ghi'], ['Bearer a b']])(
          'Authorization: %j: 401 Invalid authorization header format',
          async (value) => {
            unauthorized(
              await call(route, { headers: { authorization: value } }),
              'Invalid authorization header format',
            );
          },
        );

        it.each([
          ['garbage', () => 'garbage'],
          ['three garbage segments', () => 'not.a.jwt'],
          ['signed by another key', () => creds.foreignKey],
          ['alg none', () => creds.algNone],
          ['tampered payload', () => creds.tampered],
        ])('token %s: 401 Invalid or expired token', async (_name, token) => {
          unauthorized(await call(route, { headers: bearer(token()) }), 'Invalid or expired token');
        });

        it('token whose exp has passed, of a real key: 401 API key has expired', async () => {
          unauthorized(await call(route, { headers: bearer(creds.expiredJwt) }), 'API key has expired');
        });

        it('key record past its expires_at: 401 API key has expired', async () => {
          unauthorized(await call(route, { headers: bearer(creds.expiredRecord) }), 'API key has expired');
        });

        it('revoked key: 401 API key has been revoked', async () => {
          unauthorized(await call(route, { headers: bearer(creds.revoked) }), 'API key has been revoked');
        });

        it('credential only in X-API-Key: 401 Use Authorization: Bearer <token>', async () => {
          unauthorized(
            await call(route, { headers: { authorization: undefined, 'x-api-key': creds.full } }),
            'Use Authorization: Bearer <token>',
          );
        });

        it.each([
          ['a web session token', () => creds.session],
          ['a session token naming a real key id', () => creds.sessionNamingKey],
        ])('%s: 401', async (_name, token) => {
          unauthorized(await call(route, { headers: bearer(token()) }));
        });

        it.each([
          ['a key minted for preview', () => creds.previewMinted],
          ['a production key signed for preview', () => creds.signedForPreview],
          ['a preview key record signed for production', () => creds.productionSignedPreviewRecord],
        ])('%s: 401 (keys are bound to one environment)', async (_name, token) => {
          unauthorized(await call(route, { headers: bearer(token()) }));
        });

        if (route.scopes && route.scopes.length > 0) {
          const required = route.scopes;
          it(`key with every scope except ${required.join(', ')}: 403 forbidden`, async () => {
            const key = await creds.org.key(ALL_SCOPES.filter((s) => !required.includes(s)));
            expectErrorEnvelope(await call(route, { headers: bearer(key.token) }), {
              status: 403,
              type: 'forbidden',
            });
          });

          it('key with no scopes: 403 forbidden', async () => {
            const key = await creds.org.key([]);
            expectErrorEnvelope(await call(route, { headers: bearer(key.token) }), {
              status: 403,
              type: 'forbidden',
            });
          });
        }

        it(`key with exactly the required scopes [${route.scopes ?? []}] is let through`, async () => {
          const key = await creds.org.key(route.scopes ?? []);
          expectStoppedAtQuery(await call(route, { headers: bearer(key.token), query: UNKNOWN_QUERY }));
        });

        it('unknown query key: 400 validation_error unknown_field', async () => {
          expectStoppedAtQuery(await call(route, { query: UNKNOWN_QUERY }));
        });

        for (const param of paramsOf(route.url)) {
          it.each([['2147483648'], ['99999999999999999999']])(
            `path ${param}=%s: 400 too_large, params.max ${MAX_ID}`,
            async (value) => {
              const fields = expectValidationError(
                await call(route, { url: concreteUrl(route.url, { [param]: value }) }),
              );
              expect(fields).toEqual([
                { field: param, code: 'too_large', message: expect.any(String), params: { max: MAX_ID } },
              ]);
            },
          );

          it.each([['abc'], ['0'], ['-1'], ['1.5'], ['1e3'], ['%201']])(
            `path ${param}=%s: 400 invalid_value`,
            async (value) => {
              const fields = expectValidationError(
                await call(route, { url: concreteUrl(route.url, { [param]: value }) }),
              );
              expect(fields).toEqual([
                {
                  field: param,
                  code: 'invalid_value',
                  message: expect.any(String),
                  params: expect.any(Object),
                },
              ]);
            },
          );

          it(`path ${param}=${MAX_ID} is accepted by validation`, async () => {
            expectStoppedAtQuery(
              await call(route, {
                url: concreteUrl(route.url, { [param]: String(MAX_ID) }),
                query: UNKNOWN_QUERY,
              }),
            );
          });
        }

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
            unauthorized(await parity({ authorization: undefined }), 'Missing authorization header');
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
            for (const headers of [{}, { ...bearer(creds.full), 'content-type': 'text/plain' }]) {
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

describe('every registered /api/v1 route', () => {
  it('includes the organization lookup', () => {
    expect(real.app.publicRoutes).toContainEqual({
      method: 'GET',
      url: '/api/v1/orgs/me',
      scopes: [],
      hasBody: false,
    });
  });
});

defineRouteContract('registered routes', real, real.app.publicRoutes);
defineRouteContract(
  'probe routes',
  probed,
  probed.app.publicRoutes.filter((r) => r.url.startsWith('/api/v1/probes')),
);

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
