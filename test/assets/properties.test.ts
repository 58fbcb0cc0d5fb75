/**
 * Property tests: generated bodies and query strings sent to POST, PATCH and the list of
 * assets. Whatever arrives, the answer is never a 5xx; every 4xx is the error envelope
 * with field codes from the spec's set; valid bodies are accepted and read back as sent;
 * a rejected PATCH changes nothing.
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { parseRfc3339, toWire } from '../../src/http/timestamps.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import { type AssetApi, type AssetsFixture, assetsFixture, insertLocation, placeAsset } from './helpers.js';

const BASE = '/api/v1/assets';
let f: AssetsFixture;
let api: AssetApi;
let placed: Asset;
let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;

beforeAll(async () => {
  f = await assetsFixture();
  api = f.api;
  const asset = await api.create({
    external_key: 'PROP-PLACED',
    tags: [{ tag_type: 'rfid', value: 'PROP-T1' }],
  });
  await placeAsset(f.t, asset.id, await insertLocation(f.t, f.org.id, 'PROP-DOCK'));
  placed = (await api.get(`${BASE}/${asset.id}`)).json().data;
});
afterAll(() => f.t.close());

/** An answer among `allowed`; a 4xx is the envelope, of a type these endpoints give. */
function expectAnswer(res: LightMyRequestResponse, allowed: number[]): void {
  const context = `${res.raw.req.method} ${res.raw.req.url} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(allowed, context).toContain(res.statusCode);
  if (res.statusCode < 400) return;
  const error = expectErrorEnvelope(res);
  expect(['bad_request', 'validation_error', 'conflict', 'not_found'], context).toContain(error.type);
}

// ---------------------------------------------------------------------------------------
// Values

// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is about control characters
const NAME = /^[^\s\x00-\x1F\x7F](?:[^\x00-\x1F\x7F]*[^\s\x00-\x1F\x7F])?$/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is about control characters
const DESCRIPTION_BAD = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/;

const validName = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
  .filter((s) => NAME.test(s) && [...s].length <= 255);
const validKey = fc.stringMatching(/^[A-Za-z0-9-]{1,30}$/);
const validDescription = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
  .filter((s) => !DESCRIPTION_BAD.test(s) && [...s].length <= 1024);
/**
 * JSON objects as jsonb stores them (no U+0000), without integer literals of 19 digits or
 * more, which may lie beyond int64 and are then refused by the body decoder (bad_request).
 */
const validMetadata = fc.dictionary(
  fc.string({ unit: 'grapheme', maxLength: 8 }).filter((s) => !s.includes('\u0000')),
  fc.jsonValue({ maxDepth: 3 }).filter((v) => !/\\u0000|\d{19}/.test(JSON.stringify(v))),
  { maxKeys: 5 },
);
/** Tag types; each value is made unique when the body is sent, so shrinking cannot collide. */
const validTags = fc
  .array(fc.constantFrom('rfid', 'ble', 'barcode'), { maxLength: 3 })
  .map((types) => types.map((tag_type) => ({ tag_type, value: 'TAG' })));

/** The body with its external_key and tag values made unique to this request. */
function uniquely<T extends { external_key?: unknown; tags?: unknown }>(body: T): T {
  const out = { ...body };
  if (typeof out.external_key === 'string') out.external_key = `${out.external_key}-${fresh('K')}`;
  if (Array.isArray(out.tags)) {
    out.tags = out.tags.map((t) =>
      t && typeof t === 'object' && typeof t.value === 'string'
        ? { ...t, value: `${t.value}-${fresh('V')}` }
        : t,
    );
  }
  return out;
}

/** An instant in 1971..2999 written as RFC 3339 in any offset with 0-9 fractional digits. */
const validInstant = fc
  .record({
    millis: fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2999, 0, 1) }),
    offsetMinutes: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
    digits: fc.integer({ min: 0, max: 9 }),
    extra: fc.integer({ min: 0, max: 999_999 }),
  })
  .map(({ millis, offsetMinutes, digits, extra }) => {
    const local = new Date(millis + offsetMinutes * 60_000).toISOString().slice(0, 19);
    const fraction = `${String(millis % 1000).padStart(3, '0')}${String(extra).padStart(6, '0')}`.slice(
      0,
      digits,
    );
    const abs = Math.abs(offsetMinutes);
    const offset =
      offsetMinutes === 0
        ? 'Z'
        : `${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    return `${local}${digits > 0 ? `.${fraction}` : ''}${offset}`;
  });

const junk = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\nb',
    '\ud800',
    '😀',
    'x'.repeat(256),
    '2147483648',
    '%_',
    '0000-01-01T00:00:00Z',
    '1970-01-01T00:00:00Z',
    '9999-12-31T23:59:59-23:59',
    "'; DROP TABLE assets;--",
    { a: '\u0000' },
    { deep: [[[[[[[[[[[1]]]]]]]]]]] },
  ),
);

/** Mostly a valid value, sometimes junk, so generated bodies are valid often enough. */
const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown> = junk) =>
  fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: invalid, weight: 1 });

const anyTags = fc.oneof(
  { arbitrary: validTags, weight: 4 },
  { arbitrary: fc.constant(null), weight: 1 },
  fc.array(
    fc.record(
      {
        tag_type: fc.oneof(fc.constantFrom('rfid', 'ble', 'nfc'), junk),
        value: fc.oneof(validKey, junk),
        id: fc.integer(),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 3 },
  ),
  junk,
);

/** Now and then keys that are not create fields, or read-only ones. */
const extraKeys = fc.oneof(
  { arbitrary: fc.constant({}), weight: 8 },
  fc.record(
    {
      location_id: fc.oneof(fc.integer(), fc.constant(null)),
      location_external_key: fc.oneof(validKey, fc.constant(null)),
      id: fc.integer(),
      tag_values: fc.string(),
      nonsense: junk,
    },
    { requiredKeys: [] },
  ),
  fc.object({ maxDepth: 2 }),
);

const createFields = {
  name: validName,
  external_key: validKey,
  description: fc.oneof(validDescription, fc.constant(null)),
  is_active: fc.boolean(),
  metadata: validMetadata,
  tags: validTags,
  valid_from: validInstant,
  valid_to: fc.oneof(validInstant, fc.constant(null)),
};

const wire = (text: string) => toWire(parseRfc3339(text)!);
const tagSet = (tags: { tag_type: string; value: string }[]) =>
  tags.map((t) => `${t.tag_type}:${t.value}`).sort();

// ---------------------------------------------------------------------------------------

describe('POST /api/v1/assets with generated bodies', () => {
  it('never answers 5xx; 4xx is the envelope with spec codes; a 201 reads back as created', async () => {
    const seen = new Set<number>();
    const body = fc
      .tuple(
        fc.record(
          {
            name: mostly(validName),
            external_key: mostly(validKey),
            description: mostly(createFields.description),
            is_active: mostly(fc.boolean()),
            metadata: mostly(validMetadata),
            tags: anyTags,
            valid_from: mostly(validInstant),
            valid_to: mostly(createFields.valid_to),
          },
          { requiredKeys: [] },
        ),
        extraKeys,
      )
      .map(([fields, extra]) => ({ ...extra, ...fields }));
    await fc.assert(
      fc.asyncProperty(body, async (generated) => {
        const res = await api.post(BASE, uniquely(generated));
        seen.add(res.statusCode);
        expectAnswer(res, [201, 400, 409]);
        if (res.statusCode === 201) {
          const created = res.json().data as Asset;
          expect((await api.get(`${BASE}/${created.id}`)).json().data).toEqual(created);
        }
      }),
      {
        numRuns: 150,
        // Random inputs are mostly refused or mostly accepted by chance; these always run, so
        // both paths are exercised whatever the seed.
        examples: [[{ name: 'Generated Example' }], [{}]] as never,
      },
    );
    expect([...seen]).toEqual(expect.arrayContaining([201, 400]));
  });

  it('valid bodies are created and read back exactly as sent', async () => {
    const body = fc.record(createFields, { requiredKeys: ['name'] }).filter((b) => {
      if (b.valid_to == null) return true;
      const from = b.valid_from === undefined ? Date.now() + 60_000 : parseRfc3339(b.valid_from)!;
      return parseRfc3339(b.valid_to)! > from;
    });
    await fc.assert(
      fc.asyncProperty(body, async (generated) => {
        const sent = uniquely(generated);
        const res = await api.post(BASE, sent);
        expect(res.statusCode, res.body).toBe(201);
        const got = (await api.get(`${BASE}/${res.json().data.id}`)).json().data as Asset;
        expect(got).toMatchObject({
          name: sent.name,
          description: sent.description ?? null,
          is_active: sent.is_active ?? true,
          metadata: JSON.parse(JSON.stringify(sent.metadata ?? {})),
          valid_from: sent.valid_from === undefined ? got.created_at : wire(sent.valid_from),
          valid_to: sent.valid_to == null ? null : wire(sent.valid_to),
          deleted_at: null,
        });
        if (sent.external_key !== undefined) expect(got.external_key).toBe(sent.external_key);
        else expect(got.external_key).toMatch(/^ASSET-\d{4,}$/);
        expect(tagSet(got.tags)).toEqual(tagSet(sent.tags ?? []));
      }),
      { numRuns: 100 },
    );
  });
});

describe('PATCH /api/v1/assets/{asset_id} with generated bodies', () => {
  it('never answers 5xx; a 200 is what GET then returns with updated_at advanced; a 400 changes nothing', async () => {
    const seen = new Set<number>();
    const echo = (a: Asset) =>
      fc.record(
        {
          id: fc.constantFrom(a.id, a.id + 1),
          created_at: fc.constantFrom(a.created_at, '2001-01-01T00:00:00Z'),
          updated_at: fc.constantFrom(a.updated_at, '2001-01-01T00:00:00Z'),
          deleted_at: fc.constantFrom(null, a.created_at),
          location_id: fc.constantFrom(a.location_id, 7, null),
          location_external_key: fc.constantFrom(a.location_external_key, 'ELSEWHERE'),
          external_key: fc.constantFrom(a.external_key, 'OTHER-KEY'),
          tags: fc.constantFrom(a.tags, [...a.tags].reverse(), []),
        },
        { requiredKeys: [] },
      );
    const update = fc.record(
      {
        name: mostly(validName),
        description: mostly(createFields.description),
        is_active: mostly(fc.boolean()),
        metadata: mostly(validMetadata),
        valid_from: mostly(validInstant),
        valid_to: mostly(createFields.valid_to),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        update,
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.gen(),
        async (fields, extras, echoing, gen) => {
          const before = (await api.get(`${BASE}/${placed.id}`)).json().data as Asset;
          const echoed = echoing ? gen(() => echo(before)) : {};
          const unknown = extras === 0 ? { nonsense: 1 } : {};
          const res = await api.patch(`${BASE}/${placed.id}`, { ...echoed, ...fields, ...unknown });
          seen.add(res.statusCode);
          expectAnswer(res, [200, 400]);
          const after = (await api.get(`${BASE}/${placed.id}`)).json().data as Asset;
          if (res.statusCode === 200) {
            expect(after).toEqual(res.json().data);
            expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
          } else {
            expect(after).toEqual(before);
          }
        },
      ),
      {
        numRuns: 120,
        // Random inputs are mostly refused or mostly accepted by chance; these always run, so
        // both paths are exercised whatever the seed.
        examples: [
          [{}, 1, false, undefined],
          [{ name: '' }, 1, false, undefined],
        ] as never,
      },
    );
    expect([...seen].sort()).toEqual([200, 400]);
  });
});

describe('GET /api/v1/assets with generated query strings', () => {
  it('never answers 5xx; a 200 is a list envelope honouring limit and offset', async () => {
    const values = fc.oneof(
      fc.constantFrom('true', 'false', '0', '1', '-1', '50', '200', '201', '2147483647', '2147483648', ''),
      fc.constantFrom('external_key', '-name', 'created_at,-updated_at', 'name,bogus', '-'),
      fc.constantFrom('PROP-PLACED', 'PROP-DOCK', 'A,B', 'a b', '%', '_', '\u0001', '\u007f', 'é', '😀'),
      fc.string({ maxLength: 12 }),
      fc.integer().map(String),
    );
    const params = fc.constantFrom(
      'location_id',
      'location_external_key',
      'external_key',
      'is_active',
      'include_deleted',
      'q',
      'sort',
      'limit',
      'offset',
      'unknown',
    );
    const query = fc.array(fc.tuple(params, values), { maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(query, async (pairs) => {
        const search = new URLSearchParams(pairs).toString();
        const res = await api.get(`${BASE}${search ? `?${search}` : ''}`);
        expectAnswer(res, [200, 400]);
        if (res.statusCode !== 200) return;
        const body = res.json();
        expect(Object.keys(body).sort()).toEqual(['data', 'limit', 'offset', 'total_count']);
        expect(body.data.length).toBeLessThanOrEqual(body.limit);
        if (body.data.length > 0)
          expect(body.total_count).toBeGreaterThanOrEqual(body.offset + body.data.length);
      }),
      { numRuns: 200 },
    );
  });
});
