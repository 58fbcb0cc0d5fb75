import { Validator } from '@seriousme/openapi-schema-validator';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { PublicRoute } from '../../src/http/plugins/methods.js';
import { DataEnvelope, Nullable, TimestampOut } from '../../src/http/schemas/common.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * The machine-readable description (API-SPEC Versioning 1, 3, 4; Authentication 7). The
 * checks iterate the document and `app.publicRoutes`, so every route added later is held
 * to them without touching this file.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type OpenApiDoc = JsonObject & { paths: Record<string, Record<string, JsonObject>> };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Fastify's `/a/:id` as OpenAPI writes it: `/a/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function operationsOf(doc: OpenApiDoc): { method: string; path: string; op: JsonObject }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op })),
  );
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Calls `visit` on every object in the document with its JSON pointer. */
function walk(node: Json, visit: (obj: JsonObject, pointer: string) => void, pointer = ''): void {
  if (Array.isArray(node)) {
    node.forEach((child, i) => {
      walk(child, visit, `${pointer}/${i}`);
    });
  } else if (isObject(node)) {
    visit(node, pointer);
    for (const [key, child] of Object.entries(node)) walk(child, visit, `${pointer}/${key}`);
  }
}

/**
 * Nullability in the OpenAPI 3.0 style only: no `type: 'null'` (3.1 / JSON Schema), no
 * type arrays, and `nullable: true` only next to a `type` (3.0.3 ignores it otherwise) and
 * never next to a `$ref` (whose siblings are ignored, so generators drop the null).
 */
function nullabilityProblems(doc: Json): string[] {
  const problems: string[] = [];
  walk(doc, (obj, pointer) => {
    if (obj.type === 'null') problems.push(`${pointer}: type 'null'`);
    if (Array.isArray(obj.type)) problems.push(`${pointer}: type array ${JSON.stringify(obj.type)}`);
    if (obj.nullable === true) {
      if (typeof obj.type !== 'string') problems.push(`${pointer}: nullable without type`);
      if ('$ref' in obj) problems.push(`${pointer}: nullable next to $ref`);
      if (Array.isArray(obj.enum) && !obj.enum.includes(null)) {
        problems.push(`${pointer}: nullable enum without null among its values`);
      }
    }
  });
  return problems;
}

async function validate(doc: Json): Promise<void> {
  const result = await new Validator().validate(doc as Record<string, unknown>);
  expect(result.valid, `OpenAPI validation errors:\n${JSON.stringify(result.errors, null, 2)}`).toBe(true);
}

describe('OpenAPI description', () => {
  let t: TestApp;
  let doc: OpenApiDoc;
  beforeAll(async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => t.close());

  it('is served as JSON and as YAML, the same document', async () => {
    const json = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const yaml = await t.app.inject({ method: 'GET', url: '/api/openapi.yaml' });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(parseYaml(yaml.body)).toEqual(json.json());
  });

  it('is OpenAPI 3.0.3 with document version 1.0.0', () => {
    expect(doc.openapi).toBe('3.0.3');
    expect((doc.info as JsonObject).version).toBe('1.0.0');
  });

  it('passes an OpenAPI schema validator', async () => {
    await validate(doc);
  });

  it.each([
    ['/openapi.json', '/api/openapi.json'],
    ['/openapi.yaml', '/api/openapi.yaml'],
  ])('bare %s answers 301 to %s', async (url, location) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe(location);
  });

  it('documents exactly the public v1 routes: no HEAD twins, no 405 answers, no doc endpoints', () => {
    const documented = operationsOf(doc)
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    const routes = t.app.publicRoutes.map((r) => `${r.method} ${openApiPath(r.url)}`).sort();
    expect(routes.length).toBeGreaterThan(0);
    expect(documented).toEqual(routes);
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/api\/v1\//);
  });

  it('carries x-required-scopes equal to each route config.scopes', () => {
    const checked: PublicRoute[] = [];
    for (const route of t.app.publicRoutes) {
      const op = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.url} is documented`).toBeDefined();
      expect(Array.isArray(route.scopes), `${route.method} ${route.url} declares config.scopes`).toBe(true);
      expect(op!['x-required-scopes'], `${route.method} ${route.url}`).toEqual(route.scopes);
      checked.push(route);
    }
    expect(checked.length).toBe(operationsOf(doc).length);
    for (const { method, path, op } of operationsOf(doc)) {
      expect(Array.isArray(op['x-required-scopes']), `${method} ${path} has x-required-scopes`).toBe(true);
    }
  });

  it('gives the organization lookup the empty scope list', () => {
    expect(doc.paths['/api/v1/orgs/me']?.get?.['x-required-scopes']).toEqual([]);
  });

  it('gives the tag operations summaries a generated client can show as they are', () => {
    // Built from the owner's kind: "Attach a tag to a asset" was what SDK docs printed.
    expect(doc.paths['/api/v1/assets/{asset_id}/tags']?.post?.summary).toBe('Attach a tag to an asset');
    expect(doc.paths['/api/v1/assets/{asset_id}/tags/{tag_id}']?.delete?.summary).toBe(
      'Detach a tag from an asset',
    );
    expect(doc.paths['/api/v1/locations/{location_id}/tags']?.post?.summary).toBe(
      'Attach a tag to a location',
    );
  });

  it('has a unique operationId on every operation and declares every path parameter', () => {
    const ids = operationsOf(doc).map(({ method, path, op }) => {
      expect(typeof op.operationId, `${method} ${path} operationId`).toBe('string');
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = ((op.parameters ?? []) as JsonObject[])
        .filter((p) => p.in === 'path')
        .map((p) => p.name)
        .sort();
      expect(declared, `${method} ${path} path parameters`).toEqual(templated);
      return op.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents the request body under the one media type the route accepts', () => {
    for (const route of t.app.publicRoutes.filter((r) => r.hasBody)) {
      const op = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
      const body = op?.requestBody as JsonObject | undefined;
      const mediaType = route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
      expect(
        isObject(body?.content) && Object.keys(body.content),
        `${route.method} ${route.url} requestBody`,
      ).toEqual([mediaType]);
    }
  });

  it('writes nullability the OpenAPI 3.0 way (nullable: true, never type null)', () => {
    expect(nullabilityProblems(doc)).toEqual([]);
  });

  it('names components by $id and every $ref resolves to one', () => {
    const schemas = (doc.components as JsonObject).schemas as JsonObject;
    const names = Object.keys(schemas);
    expect(names).toEqual(expect.arrayContaining(['ErrorEnvelope', 'Organization']));
    for (const name of names) expect(name).not.toMatch(/^def-\d+$/);
    const refs: string[] = [];
    walk(doc, (obj, pointer) => {
      if (typeof obj.$ref === 'string') refs.push(obj.$ref);
      expect('$id' in obj, `${pointer} keeps a $id`).toBe(false);
    });
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const name = ref.replace(/^#\/components\/schemas\//, '');
      expect(ref, 'refs point into components.schemas').toBe(`#/components/schemas/${name}`);
      expect(names, `${ref} resolves`).toContain(name);
    }
  });

  it('documents the error envelope for every error response', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const responses = op.responses as JsonObject;
      // Any operation can answer these, whatever its input: the spec's, and the limits'
      // answers before a route (too slow, body too large, URI too long, Expect, headers).
      for (const status of ['401', '408', '413', '414', '417', '429', '431', '500'])
        expect(responses, `${method} ${path}`).toHaveProperty(status);
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        const content = (response as JsonObject).content as JsonObject | undefined;
        expect(
          (content?.['application/json'] as JsonObject | undefined)?.schema,
          `${method} ${path} ${status}`,
        ).toEqual({
          $ref: '#/components/schemas/ErrorEnvelope',
        });
      }
    }
  });
});

/**
 * No v1 field is nullable yet; this route shows the Nullable helper and TypeBox's
 * `Union([X, Null])` both reach the document as `nullable: true`, so the walk above has
 * something to hold later timestamp fields to.
 */
describe('OpenAPI description of nullable fields', () => {
  const probe: FastifyPluginAsync = async (app) => {
    app.get(
      '/api/v1/openapi-probe',
      {
        config: { scopes: [] },
        schema: {
          operationId: 'openapiProbe',
          response: {
            200: DataEnvelope(
              Type.Object({
                seen_at: Nullable(TimestampOut()),
                name: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          },
        },
      },
      async () => ({ data: { seen_at: null, name: null } }),
    );
  };
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ routes: [probe] });
  });
  afterAll(() => t.close());

  it('renders them as nullable: true next to the type', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const data =
      doc.paths['/api/v1/openapi-probe'].get.responses['200'].content['application/json'].schema.properties
        .data;
    expect(data.properties.seen_at).toMatchObject({ type: 'string', format: 'date-time', nullable: true });
    expect(data.properties.name).toMatchObject({ type: 'string', nullable: true });
    expect(nullabilityProblems(doc)).toEqual([]);
    await validate(doc);
  });

  it('the walk flags the 3.1 style and a nullable $ref', () => {
    expect(
      nullabilityProblems({
        a: { type: 'null' },
        b: { type: ['string', 'null'] },
        c: { $ref: '#/components/schemas/X', nullable: true },
      }),
    ).toEqual([
      "/a: type 'null'",
      '/b: type array ["string","null"]',
      '/c: nullable without type',
      '/c: nullable next to $ref',
    ]);
  });
});
