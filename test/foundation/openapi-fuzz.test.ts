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
} from '../helpers/openapi-arbitraries.js';

/**
 * Every public operation of the OpenAPI document, fed generated requests (valid, near the
 * bounds, and broken as clients break them: test/helpers/openapi-arbitraries.ts) by a key
 * of its organization over seeded data, another organization's ids among the ones sent.
 * Whatever comes in, the answer is one the document lists for the operation, never a 500;
 * an error is the spec's envelope, a success matches the documented schema and shows
 * nothing of the other organization, whose records are left as they were. The operations
 * come from the document, so a route added later is fuzzed without touching this file.
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
/** Ids of the seeded records, which generated `*_id` fields and parameters mostly take. */
let knownIds: number[] = [];

interface Seeded {
  asset_id: number[];
  location_id: number[];
  tag_id: number[];
}

/** Locations, assets and tags of the key's organization, their keys and names marked by `prefix`. */
async function seed(key: string, prefix: string, tagDigit: string): Promise<Seeded> {
  const call = async (url: string, body: unknown) => {
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; tags?: { id: number }[] };
  };
  const root = await call('/api/v1/locations', { name: `${prefix}Site`, external_key: `${prefix}SITE` });
  const dock = await call('/api/v1/locations', {
    name: `${prefix}Dock`,
    external_key: `${prefix}DOCK`,
    parent_id: root.id,
  });
  const assets = [];
  for (let i = 1; i <= 3; i++) {
    assets.push(
      await call('/api/v1/assets', {
        name: `${prefix}Pallet ${i}`,
        external_key: `${prefix}PAL-${i}`,
        tags: [{ tag_type: 'rfid', value: `E20000000000000000000${tagDigit}0${i}` }],
      }),
    );
  }
  const locationTag = await call(`/api/v1/locations/${dock.id}/tags`, {
    tag_type: 'ble',
    value: `AABBCCDDEE${tagDigit}F`,
  });
  return {
    asset_id: assets.map((a) => a.id),
    location_id: [root.id, dock.id],
    tag_id: [...assets.flatMap((a) => (a.tags ?? []).map((tag) => tag.id)), locationTag.id],
  };
}

/** Another organization's records: their ids are sent too, and must never be read or changed. */
const FOREIGN = 'FOREIGN-';
let foreignKey: string;
let foreign: Seeded;
/** The other organization's records as its own key read them after seeding. */
const foreignBefore = new Map<string, string>();

const foreignUrls = () => [
  ...foreign.asset_id.map((id) => `/api/v1/assets/${id}`),
  ...foreign.location_id.map((id) => `/api/v1/locations/${id}`),
];

beforeAll(async () => {
  t = await buildTestApp();
  const org = await t.createOrg('Fuzzed');
  token = (await org.key()).token;
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
  const own = await seed(token, '', '1');
  const other = await t.createOrg('Other');
  foreignKey = (await other.key()).token;
  foreign = await seed(foreignKey, FOREIGN, '2');
  for (const url of foreignUrls()) {
    foreignBefore.set(url, (await t.app.inject({ method: 'GET', url, headers: bearer(foreignKey) })).body);
  }
  for (const name of ['asset_id', 'location_id', 'tag_id'] as const)
    existing[name] = [...own[name], ...foreign[name]];
  knownIds = [...own.asset_id, ...own.location_id, ...foreign.asset_id, ...foreign.location_id];
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
  // Another organization's ids are sent too: nothing of its records ever comes back.
  expect(res.body.includes(FOREIGN), context).toBe(false);
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
    const generation = { resolve: resolver(doc), ids: knownIds };
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(17);
    for (const [method, path, op] of ops) {
      const params = op.parameters ?? [];
      const pathNames = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
      const pathArb = fc.tuple(...pathNames.map((name) => pathValue(existing[name] ?? [1])));
      const media = op.requestBody ? Object.keys(op.requestBody.content)[0]! : undefined;
      const bodyArb = op.requestBody
        ? bodyFor(op.requestBody.content[media!]!.schema, generation).map((v) => JSON.stringify(v))
        : fc.constant(undefined);
      await fc.assert(
        fc.asyncProperty(pathArb, queryFor(params, generation), bodyArb, async (values, query, payload) => {
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
    // Nor was any of them changed or deleted through this organization's key.
    for (const url of foreignUrls()) {
      const now = await t.app.inject({ method: 'GET', url, headers: bearer(foreignKey) });
      expect(now.body, url).toBe(foreignBefore.get(url));
    }
    expect(answered.error).toBeGreaterThanOrEqual(ops.length * 10);
  });
});
