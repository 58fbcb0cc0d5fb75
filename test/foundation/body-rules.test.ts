/**
 * Request decoding and field validation (API-SPEC Conventions, Errors, Limits), on the
 * probe routes of test/helpers/probe-routes.ts, which use the shared schema builders
 * (Id, TimestampIn, Nullable, PageQuery, ExternalKey) the real endpoints use.
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import {
  type ErrorBody,
  expectErrorEnvelope,
  expectSurfaceHeaders,
  expectValidationError,
} from '../helpers/error-envelope.js';
import { PROBE_TAG_TYPES, probeRoutes } from '../helpers/probe-routes.js';

const MAX_ID = 2147483647;
const BODY_LIMIT = 1048576;
const JSON_TYPE = { 'content-type': 'application/json' };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await buildTestApp({ routes: [probeRoutes], bodyLimit: BODY_LIMIT });
  token = (await (await t.createOrg()).key()).token;
});
afterAll(() => t.close());

const post = (payload: string, headers: Record<string, string> = JSON_TYPE) =>
  t.app.inject({ method: 'POST', url: '/api/v1/probes', headers: { ...bearer(token), ...headers }, payload });

const patch = (payload: string, id = '1') =>
  t.app.inject({
    method: 'PATCH',
    url: `/api/v1/probes/${id}`,
    headers: { ...bearer(token), ...MERGE_PATCH },
    payload,
  });

const postJson = (body: unknown) => post(JSON.stringify(body));
const patchJson = (body: unknown, id?: string) => patch(JSON.stringify(body), id);

const list = (query: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1/probes?${query}`, headers: bearer(token) });

function expectBadRequest(res: LightMyRequestResponse, detail?: RegExp): ErrorBody {
  const error = expectErrorEnvelope(res, { status: 400, type: 'bad_request', ...(detail ? { detail } : {}) });
  expect(error).not.toHaveProperty('fields');
  return error;
}

/** The single field error of a `validation_error` response. */
function expectOneField(res: LightMyRequestResponse) {
  const fields = expectValidationError(res);
  expect(fields).toHaveLength(1);
  return fields[0]!;
}

function expectAccepted(res: LightMyRequestResponse, status = 201) {
  expectSurfaceHeaders(res);
  expect(res.statusCode, res.body).toBe(status);
  return res.json().data;
}

describe('decoding failures are bad_request without fields', () => {
  it.each([
    ['truncated', '{"name":'],
    ['unquoted key', '{name: "a"}'],
    ['single quotes', "{'name':'a'}"],
    ['trailing comma', '{"name":"a",}'],
    ['trailing garbage', '{"name":"a"} x'],
    ['NaN', '{"name":"a","ref_id":NaN}'],
    ['a lone brace', '{'],
  ])('invalid JSON (%s): 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body));
    expectBadRequest(await patch(body));
  });

  it.each([
    ['array', '[]'],
    ['array of objects', '[{"name":"a"}]'],
    ['string', '"name"'],
    ['number', '42'],
    ['boolean', 'true'],
    ['null', 'null'],
  ])('top-level %s: 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body), /must be a JSON object/);
    expectBadRequest(await patch(body), /must be a JSON object/);
  });

  it('PATCH body literal null: bad_request whose detail says the body must be a JSON object', async () => {
    const error = expectBadRequest(await patch('null'));
    expect(error.detail).toMatch(/body must be a JSON object/);
  });

  it.each([
    ['empty', ''],
    ['whitespace only', '  \n\t '],
  ])('%s body on POST and PATCH: 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body));
    expectBadRequest(await patch(body));
  });

  it.each([
    ['on an id field', '{"name":"a","ref_id":99999999999999999999999}'],
    ['on a string field', '{"name":99999999999999999999999}'],
    ['negative', '{"name":"a","ref_id":-99999999999999999999999}'],
    [
      'nested in an array',
      '{"name":"a","tags":[{"tag_type":"rfid","value":"v","n":[1,99999999999999999999999]}]}',
    ],
    ['under an unknown key', '{"name":"a","whatever":{"deep":99999999999999999999999}}'],
    ['one above int64', '{"name":"a","ref_id":9223372036854775808}'],
    ['one below int64', '{"name":"a","ref_id":-9223372036854775809}'],
  ])('an integer beyond int64 %s: 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body));
    expectBadRequest(await patch(body));
  });

  it('digits inside a string are not numbers', async () => {
    const data = expectAccepted(await postJson({ name: '99999999999999999999999' }));
    expect(data.received).toEqual({ name: '99999999999999999999999' });
  });
});

describe('field errors (validation_error)', () => {
  it.each([['2147483648'], ['9007199254740993'], ['9223372036854775807']])(
    'id field %s (within the decoder range): too_large, params.max 2147483647',
    async (value) => {
      const body = `{"name":"a","ref_id":${value}}`;
      for (const res of [await post(body), await patch(body)]) {
        expect(expectOneField(res)).toEqual({
          field: 'ref_id',
          code: 'too_large',
          message: expect.any(String),
          params: { max: MAX_ID },
        });
      }
    },
  );

  it('id field 2147483647 is accepted', async () => {
    expect(expectAccepted(await postJson({ name: 'a', ref_id: MAX_ID })).received.ref_id).toBe(MAX_ID);
  });

  it.each([[0], [-1], [1.5]])('id field %s: invalid_value', async (value) => {
    expect(expectOneField(await postJson({ name: 'a', ref_id: value })).code).toBe('invalid_value');
  });

  it('several bad fields: one entry per field, detail = first message + (and N more validation errors)', async () => {
    const res = await postJson({
      name: '',
      ref_id: 'x',
      colour: 'red',
      observed_at: '2024-01-01',
      // Violates both maxLength and pattern: still one entry.
      external_key: 'a b'.repeat(100),
    });
    const error = expectErrorEnvelope(res, { status: 400, type: 'validation_error' });
    const fields = error.fields!;
    expect(fields.map((f) => f.field).sort()).toEqual([
      'colour',
      'external_key',
      'name',
      'observed_at',
      'ref_id',
    ]);
    expect(error.detail).toBe(`${fields[0]!.message} (and 4 more validation errors)`);
  });

  it('one bad field: detail is its message alone', async () => {
    const error = expectErrorEnvelope(await postJson({ name: '' }), {
      status: 400,
      type: 'validation_error',
    });
    expect(error.detail).toBe(error.fields![0]!.message);
  });

  it('missing required key: required', async () => {
    expect(expectOneField(await postJson({}))).toMatchObject({ field: 'name', code: 'required' });
    const fields = expectValidationError(await postJson({ name: 'a', tags: [{}] }));
    expect(fields.map((f) => [f.field, f.code]).sort()).toEqual([
      ['tags[0].tag_type', 'required'],
      ['tags[0].value', 'required'],
    ]);
  });

  it('unknown body key: unknown_field (top level and nested; POST and PATCH)', async () => {
    expect(expectOneField(await postJson({ name: 'a', colour: 'red' }))).toMatchObject({
      field: 'colour',
      code: 'unknown_field',
    });
    expect(expectOneField(await patchJson({ colour: 'red' }))).toMatchObject({
      field: 'colour',
      code: 'unknown_field',
    });
    expect(
      expectOneField(await postJson({ name: 'a', tags: [{ tag_type: 'rfid', value: 'v', colour: 1 }] })),
    ).toMatchObject({ field: 'tags[0].colour', code: 'unknown_field' });
  });

  it.each([
    ['name', 5, 'string', 'number'],
    ['name', null, 'string', 'null'],
    ['name', true, 'string', 'boolean'],
    ['name', [], 'string', 'array'],
    ['name', {}, 'string', 'object'],
    ['ref_id', '5', 'number', 'string'],
    ['ref_id', null, 'number', 'null'],
    ['ref_id', true, 'number', 'boolean'],
    ['tags', {}, 'array', 'object'],
    ['tags', null, 'array', 'null'],
    ['observed_at', 5, 'string', 'number'],
    ['external_key', null, 'string', 'null'],
  ])(
    '%s = %j: invalid_value, expected_type %s, received_type %s',
    async (field, value, expected, received) => {
      const body = { name: 'a', [field]: value };
      for (const res of [await postJson(body), await patchJson(body)]) {
        expect(expectOneField(res)).toEqual({
          field,
          code: 'invalid_value',
          message: expect.any(String),
          params: { expected_type: expected, received_type: received },
        });
      }
    },
  );

  it('a nullable field of the wrong type: invalid_value naming the JSON types', async () => {
    const f = expectOneField(await postJson({ name: 'a', description: 5 }));
    expect(f).toMatchObject({ field: 'description', code: 'invalid_value' });
    expect(f.params.received_type).toBe('number');
    expect([f.params.expected_type].flat()).toContain('string');
    for (const type of [f.params.expected_type].flat()) {
      expect(['boolean', 'number', 'string', 'array', 'object', 'null']).toContain(type);
    }
  });

  it('a nullable field accepts null (POST and PATCH)', async () => {
    expect(expectAccepted(await postJson({ name: 'a', description: null })).received).toEqual({
      name: 'a',
      description: null,
    });
    expect(expectAccepted(await patchJson({ description: null }), 200).received).toEqual({
      description: null,
    });
  });

  it('PATCH {} is accepted', async () => {
    expect(expectAccepted(await patchJson({}), 200)).toEqual({ id: 1, received: {} });
  });

  it.each([
    ['name', '', 'too_short', { min_length: 1 }],
    ['name', 'a'.repeat(256), 'too_long', { max_length: 255 }],
    ['description', '', 'too_short', { min_length: 1 }],
    ['description', 'd'.repeat(1025), 'too_long', { max_length: 1024 }],
    ['external_key', '', 'too_short', { min_length: 1 }],
    ['external_key', 'K'.repeat(256), 'too_long', { max_length: 255 }],
  ])('%s of length %#: %s', async (field, value, code, params) => {
    const f = expectOneField(await postJson({ name: 'a', [field]: value }));
    expect(f).toEqual({ field, code, message: expect.any(String), params });
  });

  it('nested length limits name the nested field', async () => {
    const f = expectOneField(await postJson({ name: 'a', tags: [{ tag_type: 'ble', value: '' }] }));
    expect(f).toEqual({
      field: 'tags[0].value',
      code: 'too_short',
      message: expect.any(String),
      params: { min_length: 1 },
    });
  });

  it('lengths at the bounds are accepted', async () => {
    const body = { name: 'n'.repeat(255), description: 'd'.repeat(1024), external_key: 'K'.repeat(255) };
    expect(expectAccepted(await postJson(body)).received).toEqual(body);
  });

  it.each([['nfc'], ['RFID'], ['']])(
    'tag_type %j: invalid_value with params.allowed_values',
    async (value) => {
      const f = expectOneField(await postJson({ name: 'a', tags: [{ tag_type: value, value: 'v' }] }));
      expect(f).toEqual({
        field: 'tags[0].tag_type',
        code: 'invalid_value',
        message: expect.any(String),
        params: { allowed_values: [...PROBE_TAG_TYPES] },
      });
    },
  );

  it('external_key outside its pattern: invalid_value', async () => {
    expect(expectOneField(await postJson({ name: 'a', external_key: 'a,b' }))).toMatchObject({
      field: 'external_key',
      code: 'invalid_value',
    });
  });
});

describe('timestamps', () => {
  it.each([
    ['2024-01-01'],
    ['2024/01/01T00:00:00Z'],
    [''],
    ['2024-01-01T00:00:00'],
    ['2024-13-01T00:00:00Z'],
    ['2024-02-30T00:00:00Z'],
    ['2024-01-01T24:00:00Z'],
    ['2024-01-01T00:00:00.1234567890Z'],
    ['now'],
  ])('%j: invalid_value, must be an RFC 3339 timestamp', async (value) => {
    for (const res of [
      await postJson({ name: 'a', observed_at: value }),
      await patchJson({ observed_at: value }),
    ]) {
      const f = expectOneField(res);
      expect(f).toMatchObject({ field: 'observed_at', code: 'invalid_value' });
      expect(f.message).toMatch(/must be an RFC 3339 timestamp/);
    }
  });

  it.each([
    ['0001-01-01T00:00:00Z'],
    ['0001-01-01T00:00:00.000Z'],
    ['1970-01-01T00:00:00Z'],
    ['1970-01-01T00:00:00.000000000Z'],
    ['1970-01-01T01:00:00+01:00'],
    ['1969-12-31T19:00:00-05:00'],
    ['1970-01-01T00:00:00.000999999Z'],
  ])('sentinel instant %s: invalid_value', async (value) => {
    for (const res of [
      await postJson({ name: 'a', observed_at: value }),
      await patchJson({ observed_at: value }),
    ]) {
      expect(expectOneField(res)).toMatchObject({ field: 'observed_at', code: 'invalid_value' });
    }
  });

  it.each([
    ['2024-05-06T07:08:09.123456789Z', '2024-05-06T07:08:09.123Z'],
    ['2024-05-06T07:08:09.999999999Z', '2024-05-06T07:08:09.999Z'],
    ['2024-05-06T07:08:09Z', '2024-05-06T07:08:09.000Z'],
    ['2024-05-06T07:08:09.5Z', '2024-05-06T07:08:09.500Z'],
    ['2024-05-06T09:08:09.25+02:00', '2024-05-06T07:08:09.250Z'],
    ['2024-05-06t07:08:09z', '2024-05-06T07:08:09.000Z'],
    ['1970-01-01T00:00:00.001Z', '1970-01-01T00:00:00.001Z'],
  ])('%s is accepted (0-9 fractional digits, truncated to %s)', async (value, wire) => {
    const data = expectAccepted(await postJson({ name: 'a', observed_at: value }));
    expect(data.received.observed_at).toBe(value);
    expect(data.observed_at_wire).toBe(wire);
  });
});

describe('query parameters', () => {
  it('defaults: limit 50, offset 0', async () => {
    expect(expectAccepted(await list(''), 200)).toEqual([]);
    const res = await list('');
    expect(res.json()).toMatchObject({ limit: 50, offset: 0 });
  });

  it('limit=201: too_large, params.max 200', async () => {
    expect(expectOneField(await list('limit=201'))).toEqual({
      field: 'limit',
      code: 'too_large',
      message: expect.any(String),
      params: { max: 200 },
    });
  });

  it.each([['0'], ['-1'], ['abc'], ['1.5'], [''], ['1e2'], ['0x10'], ['+5'], [' 5']])(
    'limit=%j: invalid_value',
    async (value) => {
      expect(expectOneField(await list(`limit=${encodeURIComponent(value)}`))).toMatchObject({
        field: 'limit',
        code: 'invalid_value',
      });
    },
  );

  it.each([['1'], ['200']])('limit=%s is accepted', async (value) => {
    const res = await list(`limit=${value}`);
    expectAccepted(res, 200);
    expect(res.json().limit).toBe(Number(value));
  });

  it('offset=2147483648: too_large, params.max 2147483647; offset=-1: invalid_value', async () => {
    expect(expectOneField(await list('offset=2147483648'))).toMatchObject({
      field: 'offset',
      code: 'too_large',
      params: { max: MAX_ID },
    });
    expect(expectOneField(await list('offset=-1'))).toMatchObject({ field: 'offset', code: 'invalid_value' });
  });

  it('several bad parameters: one entry each', async () => {
    const fields = expectValidationError(await list('limit=201&offset=-1&colour=red'));
    expect(fields.map((f) => [f.field, f.code]).sort()).toEqual([
      ['colour', 'unknown_field'],
      ['limit', 'too_large'],
      ['offset', 'invalid_value'],
    ]);
  });
});

describe('body size limit', () => {
  it('a body over the limit: 413 payload_too_large (POST and PATCH)', async () => {
    const body = JSON.stringify({ name: 'a'.repeat(BODY_LIMIT + 10) });
    expectErrorEnvelope(await post(body), { status: 413, type: 'payload_too_large' });
    expectErrorEnvelope(await patch(body), { status: 413, type: 'payload_too_large' });
  });

  it('a body just under the limit is decoded and validated', async () => {
    const body = JSON.stringify({ name: 'a'.repeat(BODY_LIMIT - 100) });
    expect(expectOneField(await post(body))).toMatchObject({ field: 'name', code: 'too_long' });
  });
});

describe('DELETE ignores its body', () => {
  it.each([
    ['text/plain', 'hello'],
    ['application/json', 'not json'],
    ['application/json', 'null'],
  ])('DELETE with %s %j: 204', async (type, payload) => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/probes/1',
      headers: { ...bearer(token), 'content-type': type },
      payload,
    });
    expectSurfaceHeaders(res);
    expect(res.statusCode).toBe(204);
  });
});

describe('properties: arbitrary input never yields a 5xx', () => {
  const KNOWN = ['name', 'ref_id', 'observed_at', 'description', 'tags', 'external_key', 'tag_type', 'value'];
  const key = fc.oneof(fc.constantFrom(...KNOWN), fc.string(), fc.constantFrom('__proto__', 'constructor'));
  const tag = fc.dictionary(key, fc.oneof(fc.constantFrom(...PROBE_TAG_TYPES), fc.jsonValue()), {
    maxKeys: 4,
  });
  const objects = fc.dictionary(
    key,
    fc.oneof(
      fc.jsonValue(),
      fc.array(tag, { maxLength: 3 }),
      fc.constantFrom('2024-01-01T00:00:00Z', 'a', 1),
    ),
    { maxKeys: 6 },
  );
  const bodies = fc.oneof(
    fc.json(),
    fc.string(),
    fc.string({ unit: 'binary' }),
    objects.map((o) => JSON.stringify(o)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.bigInt().map((n) => `{"name":"a","ref_id":${n}}`),
  );

  function expectContractual(res: LightMyRequestResponse, sent: string, ok: number) {
    expect(res.statusCode, `${res.raw.req.method} ${sent} -> ${res.body}`).toBeLessThan(500);
    if (res.statusCode >= 400) {
      const error = expectErrorEnvelope(res);
      expect(['bad_request', 'validation_error']).toContain(error.type);
    } else {
      expect(res.statusCode).toBe(ok);
      expectSurfaceHeaders(res);
      expect(res.json().data.received).toEqual(JSON.parse(sent));
    }
  }

  it('POST /api/v1/probes with arbitrary bodies', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        expectContractual(await post(body), body, 201);
      }),
      { numRuns: 400 },
    );
  });

  it('PATCH /api/v1/probes/:probe_id with arbitrary bodies', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        expectContractual(await patch(body), body, 200);
      }),
      { numRuns: 400 },
    );
  });

  it('arbitrary path ids and query strings', async () => {
    const query = fc.dictionary(fc.oneof(fc.constantFrom('limit', 'offset'), fc.string()), fc.string(), {
      maxKeys: 3,
    });
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1 }), query, async (id, q) => {
        const qs = new URLSearchParams(q).toString();
        for (const url of [`/api/v1/probes/${encodeURIComponent(id)}`, `/api/v1/probes?${qs}`]) {
          const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
          expect(res.statusCode, `${url} -> ${res.body}`).toBeLessThan(500);
          if (res.statusCode >= 400) {
            expect(['validation_error', 'not_found']).toContain(expectErrorEnvelope(res).type);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
