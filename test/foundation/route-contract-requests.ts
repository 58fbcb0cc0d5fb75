/**
 * Requests for the shared-contract tests, which check every route in `app.publicRoutes`: each
 * route called correctly (a valid key, the content type its method needs, a schema-valid body)
 * and then changed in exactly the way a check is about.
 */
import type { HTTPMethods, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, expect } from 'vitest';
import type { PublicRoute } from '../../src/http/plugins/methods.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { probeRoutes } from '../helpers/probe-routes.js';

export const MAX_ID = 2147483647;
/** Sent on every request: CORS is disabled, so even a browser origin gets no CORS header. */
export const ORIGIN = { origin: 'https://browser.example' };

/**
 * Request bodies that pass schema validation, for routes whose body the sample generator
 * below cannot derive from the OpenAPI document. Key: `METHOD /url`.
 */
const SAMPLE_BODIES: Record<string, unknown> = {};

export interface ContractApps {
  real: TestApp;
  /** Each route set under test, named as the describe block that checks it. */
  targets: { name: string; t: TestApp; routes: PublicRoute[] }[];
}

/**
 * The registered routes, and the probe routes standing in for POST, PATCH and DELETE endpoints
 * that do not exist yet (test/helpers/probe-routes.ts). Closed after the file's tests.
 */
export async function contractApps(): Promise<ContractApps> {
  const real = await buildTestApp();
  const probed = await buildTestApp({ routes: [probeRoutes] });
  afterAll(async () => {
    await real.close();
    await probed.close();
  });
  return {
    real,
    targets: [
      { name: 'registered routes', t: real, routes: real.app.publicRoutes },
      {
        name: 'probe routes',
        t: probed,
        routes: probed.app.publicRoutes.filter((r) => r.url.startsWith('/api/v1/probes')),
      },
    ],
  };
}

const PARAM = /:([A-Za-z0-9_]+)/g;

export function paramsOf(url: string): string[] {
  return [...url.matchAll(PARAM)].map((m) => m[1]!);
}

/** The route's URL with every path parameter set to a valid id (1), or to `override`. */
export function concreteUrl(url: string, override: Record<string, string> = {}): string {
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

export interface RouteChange {
  method?: string;
  url?: string;
  query?: string;
  headers?: Record<string, string | undefined>;
  payload?: string | Buffer;
}

/** The route called correctly (valid key, content type, schema-valid body), then `change`d. */
export async function callRoute(
  t: TestApp,
  token: string,
  route: PublicRoute,
  change: RouteChange = {},
): Promise<LightMyRequestResponse> {
  const method = change.method ?? route.method;
  const headers: Record<string, string> = { ...ORIGIN, ...bearer(token), ...contentTypeFor(method) };
  for (const [k, v] of Object.entries(change.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const url = (change.url ?? concreteUrl(route.url)) + (change.query ? `?${change.query}` : '');
  const options: InjectOptions = { method: method as HTTPMethods, url, headers };
  if (change.payload !== undefined) options.payload = change.payload;
  else if (method === 'POST' || method === 'PATCH') options.payload = JSON.stringify(sampleBody(t, route));
  return t.app.inject(options);
}

/** Requests that get past authentication and content negotiation, then stop at the query. */
export const UNKNOWN_QUERY = 'contract_probe_unknown=1';

export function expectStoppedAtQuery(res: LightMyRequestResponse): void {
  const fields = expectValidationError(res);
  expect(fields[0], 'a schema-valid sample body is needed; add one to SAMPLE_BODIES').toMatchObject({
    field: 'contract_probe_unknown',
    code: 'unknown_field',
  });
}

export function expectUnauthorized(res: LightMyRequestResponse, detail?: string): void {
  expectErrorEnvelope(res, { status: 401, type: 'unauthorized', ...(detail ? { detail } : {}) });
}
