/**
 * Property tests: generated bodies and query strings sent to POST, PATCH and the list.
 * Whatever arrives, the answer is never a 5xx; every 4xx is the error envelope with field
 * codes from the spec's set; valid bodies are accepted and read back as written.
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRfc3339, toWire } from '../../src/http/timestamps.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import { BASE, type Client, client, type LocationBody } from './helpers.js';
import {
  anyDescription,
  anyId,
  anyInstant,
  anyKey,
  anyName,
  anyParentKey,
  anyTags,
  mostly,
  sometimes,
  unknownKeys,
  validDescription,
  validInstant,
  validKey,
  validName,
} from './property-values.js';

let t: TestApp;
let c: Client;
let root: LocationBody;
let target: LocationBody;
let child: LocationBody;
let counter = 0;

beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
  root = await c.create({ external_key: 'PROP-ROOT', name: 'root' });
  target = await c.create({
    external_key: 'PROP-TARGET',
    name: 'target',
    tags: [{ tag_type: 'rfid', value: 'PT-1' }],
  });
  child = await c.create({ external_key: 'PROP-CHILD', name: 'child', parent_id: target.id });
});
afterAll(() => t.close());

/** The locations made above, which generated parent references mostly name. */
const knownIds = () => [root.id, target.id, child.id];
const KNOWN_KEYS = ['PROP-ROOT', 'PROP-TARGET', 'PROP-CHILD'];

/** A 4xx answer: the envelope, of a type these endpoints can give. */
function expectClientError(res: LightMyRequestResponse, allowed: number[]): void {
  const context = `${res.raw.req.method} ${res.raw.req.url} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  expect(allowed, context).toContain(res.statusCode);
  if (res.statusCode >= 400) {
    const error = expectErrorEnvelope(res);
    expect(['bad_request', 'validation_error', 'conflict'], context).toContain(error.type);
  }
}

// ---------------------------------------------------------------------------------------
// POST

const createBody = () =>
  fc
    .tuple(
      fc.record(
        {
          name: anyName,
          external_key: anyKey,
          description: anyDescription,
          is_active: mostly(fc.boolean()),
          parent_id: anyId(knownIds()),
          parent_external_key: anyParentKey(KNOWN_KEYS),
          tags: anyTags,
          valid_from: anyInstant,
          valid_to: fc.oneof(anyInstant, fc.constant(null)),
        },
        { requiredKeys: [] },
      ),
      sometimes(unknownKeys),
    )
    .map(([body, extra]) => ({ ...body, ...(extra ?? {}) }));

const wire = (text: string) => toWire(parseRfc3339(text)!);

describe('POST /api/v1/locations with generated bodies', () => {
  it('never answers 5xx; 4xx is the envelope with spec codes; a 201 reads back as created', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(createBody(), async (body) => {
        const res = await c.post(BASE, body);
        seen.add(res.statusCode);
        expectClientError(res, [201, 400, 409]);
        if (res.statusCode === 201) {
          const created = res.json().data as LocationBody;
          expect(await c.fetch(created.id)).toEqual(created);
          expect(created.name).toBe(body.name);
          await c.del(`${BASE}/${created.id}`);
        }
      }),
      {
        numRuns: 150,
        // Random inputs are mostly refused or mostly accepted by chance; these always run, so
        // both paths are exercised whatever the seed.
        examples: [[{ name: 'Generated Example' }], [{}]] as never,
      },
    );
    // Both paths were exercised.
    expect([...seen]).toEqual(expect.arrayContaining([201, 400]));
  });

  it('valid bodies are accepted (201) and round-trip', async () => {
    const valid = fc.record(
      {
        name: validName,
        external_key: validKey,
        description: fc.oneof(validDescription, fc.constant(null)),
        is_active: fc.boolean(),
        parent: fc.constantFrom('none', 'id', 'key', 'both', 'null'),
        window: fc.tuple(validInstant, fc.option(validInstant)),
        tags: fc.array(fc.record({ tag_type: fc.constantFrom('rfid', 'ble', 'barcode'), value: validKey }), {
          maxLength: 2,
        }),
      },
      { requiredKeys: ['name', 'parent', 'window'] },
    );
    await fc.assert(
      fc.asyncProperty(valid, async ({ parent, window, tags, external_key, ...rest }) => {
        const n = ++counter;
        const [a, b] = window;
        const ordered = b !== null && parseRfc3339(b)! < parseRfc3339(a)! ? [b, a] : [a, b];
        const [from, to] = ordered as [string, string | null];
        const body: Record<string, unknown> = { ...rest };
        if (external_key !== undefined) body.external_key = `V${n}-${external_key}`;
        if (parent === 'id') body.parent_id = root.id;
        if (parent === 'key') body.parent_external_key = 'PROP-ROOT';
        if (parent === 'both') Object.assign(body, { parent_id: root.id, parent_external_key: 'PROP-ROOT' });
        if (parent === 'null') body.parent_id = null;
        const sameInstant = to !== null && parseRfc3339(to) === parseRfc3339(from);
        body.valid_from = from;
        if (to !== null && !sameInstant) body.valid_to = to;
        if (tags) body.tags = tags.map((tag, i) => ({ ...tag, value: `V${n}-${i}-${tag.value}` }));

        const res = await c.post(BASE, body);
        expect(res.statusCode, `${JSON.stringify(body)} -> ${res.body}`).toBe(201);
        const created = res.json().data as LocationBody;
        expect(await c.fetch(created.id)).toEqual(created);
        expect(created).toMatchObject({
          name: body.name,
          description: body.description ?? null,
          is_active: body.is_active ?? true,
          parent_id: parent === 'none' || parent === 'null' ? null : root.id,
          valid_from: wire(from),
          valid_to: body.valid_to === undefined ? null : wire(body.valid_to as string),
        });
        if (body.external_key !== undefined) expect(created.external_key).toBe(body.external_key);
        else expect(created.external_key).toMatch(/^LOC-\d{4,}$/);
        expect(created.tags.map((tag) => [tag.tag_type, tag.value])).toEqual(
          ((body.tags ?? []) as { tag_type: string; value: string }[]).map((tag) => [
            tag.tag_type,
            tag.value,
          ]),
        );
        await c.del(`${BASE}/${created.id}`);
      }),
      { numRuns: 80 },
    );
  });
});

// ---------------------------------------------------------------------------------------
// PATCH

describe('PATCH /api/v1/locations/{location_id} with generated bodies', () => {
  it('never answers 5xx; 4xx is the envelope with spec codes; a 200 is what GET then returns', async () => {
    const echo = fc.constantFrom('current', 'current', 'current', 'current', 'current', 'other');
    const patchBody = fc.tuple(
      fc.record(
        {
          name: anyName,
          description: anyDescription,
          is_active: mostly(fc.boolean()),
          parent_id: anyId(knownIds()),
          parent_external_key: anyParentKey(KNOWN_KEYS),
          valid_from: anyInstant,
          valid_to: fc.oneof(anyInstant, fc.constant(null)),
          id: mostly(echo),
          created_at: mostly(echo),
          updated_at: mostly(echo),
          deleted_at: mostly(fc.oneof(fc.constant(null), echo)),
          external_key: mostly(echo),
          tags: mostly(echo, anyTags),
        },
        { requiredKeys: [] },
      ),
      sometimes(unknownKeys),
    );
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(patchBody, async ([generated, extra]) => {
        const current = await c.fetch(target.id);
        const body: Record<string, unknown> = { ...generated, ...(extra ?? {}) };
        const resolve = (field: keyof LocationBody, other: unknown) => {
          if (body[field] === 'current') body[field] = current[field];
          else if (body[field] === 'other') body[field] = other;
        };
        resolve('id', current.id + 1);
        resolve('created_at', '2001-02-03T04:05:06Z');
        resolve('updated_at', '2001-02-03T04:05:06Z');
        resolve('deleted_at', '2001-02-03T04:05:06Z');
        resolve('external_key', 'SOMETHING-ELSE');
        resolve('tags', []);
        const res = await c.patch(`${BASE}/${target.id}`, body);
        seen.add(res.statusCode);
        expectClientError(res, [200, 400, 409]);
        if (res.statusCode === 200) {
          const updated = res.json().data as LocationBody;
          expect(await c.fetch(target.id)).toEqual(updated);
          expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(current.updated_at));
          if (typeof body.name === 'string') expect(updated.name).toBe(body.name);
          if (body.valid_from !== undefined) expect(updated.valid_from).toBe(wire(body.valid_from as string));
        } else {
          const after = await c.fetch(target.id);
          expect(after.updated_at).toBe(current.updated_at);
        }
      }),
      {
        numRuns: 150,
        // Random bodies are mostly refused; these always run, so both paths are exercised
        // whatever the seed: an empty patch, a plain rename of the display name, an echo.
        examples: [
          [[{}, undefined]],
          [[{ name: 'Generated Example' }, undefined]],
          [[{ is_active: false, updated_at: 'current', id: 'current' }, undefined]],
          [[{ name: '' }, undefined]],
        ] as never,
      },
    );
    expect([...seen]).toEqual(expect.arrayContaining([200, 400]));
  });
});

// ---------------------------------------------------------------------------------------
// List

describe('GET /api/v1/locations with generated query strings', () => {
  it('never answers 5xx; 400 is the envelope with spec codes; 200 is the list envelope', async () => {
    const names = fc.constantFrom(
      'parent_id',
      'parent_external_key',
      'external_key',
      'is_active',
      'include_deleted',
      'q',
      'sort',
      'limit',
      'offset',
      'bogus',
    );
    const values = fc.oneof(
      fc.constantFrom('1', '0', '-1', '2147483647', '2147483648', '99999999999999999999', '1.5', '1e3', ''),
      fc.constantFrom(
        'true',
        'false',
        'TRUE',
        'PROP-ROOT',
        'a,b',
        'name',
        '-name,created_at',
        'id',
        'name,,',
      ),
      fc.string({ maxLength: 20 }),
      fc.string({ unit: 'grapheme', maxLength: 10 }),
    );
    const raw = fc.constantFrom('%', '%zz', '%00', '%E2%82', '+', '&&', '=', '%3D%26');
    const query = fc.array(fc.tuple(names, fc.oneof(values.map(encodeURIComponent), raw)), { maxLength: 6 });
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(query, async (pairs) => {
        const qs = pairs.map(([k, v]) => `${k}=${v}`).join('&');
        const res = await c.get(`${BASE}?${qs}`);
        seen.add(res.statusCode);
        expectClientError(res, [200, 400]);
        if (res.statusCode === 200) {
          const page = res.json();
          expect(Object.keys(page).sort()).toEqual(['data', 'limit', 'offset', 'total_count']);
          expect(Array.isArray(page.data)).toBe(true);
          expect(page.data.length).toBeLessThanOrEqual(page.limit);
          expect(page.total_count).toBeGreaterThanOrEqual(page.data.length);
        }
      }),
      {
        numRuns: 250,
        // Random inputs are mostly refused or mostly accepted by chance; these always run, so
        // both paths are exercised whatever the seed.
        examples: [[[]], [[['bogus', '1']]]] as never,
      },
    );
    expect([...seen]).toEqual(expect.arrayContaining([200, 400]));
  });

  it('tree lists with generated query strings never answer 5xx', async () => {
    const kinds = fc.constantFrom('ancestors', 'children', 'descendants');
    const pairs = fc.array(
      fc.tuple(
        fc.constantFrom('limit', 'offset', 'sort', 'q', 'x'),
        fc.oneof(
          fc.constantFrom('1', '0', '200', '201', '-5', 'abc', ''),
          fc.string({ maxLength: 8 }).map(encodeURIComponent),
        ),
      ),
      { maxLength: 4 },
    );
    await fc.assert(
      fc.asyncProperty(kinds, pairs, async (kind, query) => {
        const qs = query.map(([k, v]) => `${k}=${v}`).join('&');
        expectClientError(await c.get(`${BASE}/${target.id}/${kind}?${qs}`), [200, 400]);
      }),
      { numRuns: 100 },
    );
  });
});
