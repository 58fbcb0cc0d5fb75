import { Ajv } from 'ajv';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import {
  bodyFor,
  type Parameter,
  pathValue,
  queryFor,
  resolver,
  type Schema,
  useKnownIds,
} from '../helpers/openapi-arbitraries.js';

/**
 * Every public operation of the OpenAPI document, fed generated requests (valid, near the
 * bounds, and broken as clients break them: test/helpers/openapi-arbitraries.ts) by a key
 * of its organization over seeded data. Whatever comes in, the answer is one the document
 * lists for the operation, never a 500; an error is the spec's envelope and a success
 * matches the documented schema. The operations come from the document, so a route added
 * later is fuzzed without touching this file.
 */

type Operation = {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

/** Generated requests per operation (each one request through app.inject); more with TAGTRAIL_FUZZ_RUNS. */
const RUNS = Number(process.env.TAGTRAIL_FUZZ_RUNS ?? 60);

/** How the generated requests were answered, so that a generator that never gets past validation shows. */
const answered = { success: 0, error: 0 };

let t: TestApp;
let token: string;
let doc: Doc;
/** Ids of the seeded records by path parameter name. */
const existing: Record<string, number[]> = {};

async function seed(): Promise<void> {
  const call = async (method: 'POST' | 'PATCH', url: string, body: unknown) => {
    const res = await t.app.inject({
      method,
      url,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; tags?: { id: number }[] };
  };
  const root = await call('POST', '/api/v1/locations', { name: 'Site', external_key: 'SITE' });
  const dock = await call('POST', '/api/v1/locations', {
    name: 'Dock',
    external_key: 'DOCK',
    parent_id: root.id,
  });
  const assets = [];
  for (let i = 1; i <= 3; i++) {
    assets.push(
      await call('POST', '/api/v1/assets', {
        name: `Pallet ${i}`,
        external_key: `PAL-${i}`,
        tags: [{ tag_type: 'rfid', value: `E2000000000000000000000${i}` }],
      }),
    );
  }
  const locationTag = await call('POST', `/api/v1/locations/${dock.id}/tags`, {
    tag_type: 'ble',
    value: 'AABBCCDDEEFF',
  });
  existing.asset_id = assets.map((a) => a.id);
  existing.location_id = [root.id, dock.id];
  useKnownIds([root.id, dock.id, ...assets.map((a) => a.id)]);
  existing.tag_id = [...assets.flatMap((a) => (a.tags ?? []).map((tag) => tag.id)), locationTag.id];
}

beforeAll(async () => {
  t = await buildTestApp();
  const org = await t.createOrg('Fuzzed');
  token = (await org.key()).token;
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
  await seed();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });

/** The operations of the document, as [METHOD, path template, operation]. */
function operations(): [string, string, Operation][] {
  // Deletions last, so that the operations before them find the seeded records.
  return Object.entries(doc.paths)
    .flatMap(([path, item]) =>
      Object.entries(item).map(
        ([method, op]) => [method.toUpperCase(), path, op] as [string, string, Operation],
      ),
    )
    .sort((a, b) => Number(a[0] === 'DELETE') - Number(b[0] === 'DELETE'));
}

function check(method: string, url: string, op: Operation, res: LightMyRequestResponse, payload?: string) {
  answered[res.statusCode >= 400 ? 'error' : 'success'] += 1;
  const context = `${method} ${url} ${payload?.slice(0, 300) ?? ''} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  expect(Object.keys(op.responses), context).toContain(String(res.statusCode));
  if (res.statusCode >= 400) {
    expectErrorEnvelope(res);
    return;
  }
  if (res.statusCode === 204) {
    expect(res.body, context).toBe('');
    return;
  }
  const schema = op.responses[String(res.statusCode)]?.content?.['application/json']?.schema;
  expect(schema, context).toBeDefined();
  const validate = ajv.compile({ ...schema, components: doc.components });
  const valid = validate(JSON.parse(res.body));
  expect(valid ? [] : validate.errors, context).toEqual([]);
}

describe('the OpenAPI document, fuzzed', () => {
  it('answers every generated request with a documented status, never a 500', {
    timeout: 300_000,
  }, async () => {
    const resolve = resolver(doc);
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(17);
    for (const [method, path, op] of ops) {
      const params = op.parameters ?? [];
      const pathNames = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
      const pathArb = fc.tuple(...pathNames.map((name) => pathValue(existing[name] ?? [1])));
      const media = op.requestBody ? Object.keys(op.requestBody.content)[0]! : undefined;
      const bodyArb = op.requestBody
        ? bodyFor(op.requestBody.content[media!]!.schema, resolve).map((v) => JSON.stringify(v))
        : fc.constant(undefined);
      await fc.assert(
        fc.asyncProperty(pathArb, queryFor(params, resolve), bodyArb, async (values, query, payload) => {
          let i = 0;
          const url = path.replace(/\{[A-Za-z0-9_]+\}/g, () => values[i++]!) + query;
          const headers: Record<string, string> = bearer(token);
          if (media) headers['content-type'] = media;
          const res = await t.app.inject({
            method: method as 'GET',
            url,
            headers,
            ...(payload === undefined ? {} : { payload }),
          });
          check(method, url, op, res, payload);
        }),
        { numRuns: RUNS },
      );
    }
    // The routes' own work (the database, the rules past the schema) was reached, not only validation.
    expect(answered.success).toBeGreaterThanOrEqual(40);
    expect(answered.error).toBeGreaterThanOrEqual(ops.length * 10);
  });
});
