/**
 * Field validation (API-SPEC Errors, Limits): body fields, timestamps and query parameters, each
 * failure a `validation_error` entry, on the probe routes (see probe-requests.ts).
 */
import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { PROBE_TAG_TYPES } from '../helpers/probe-routes.js';
import { expectAccepted, expectOneField, useProbeApp } from './probe-requests.js';

const MAX_ID = 2147483647;

const { post, patch, postJson, patchJson, list } = useProbeApp();

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
      ref_id: 0,
      colour: 'red',
      observed_at: '0001-01-01T00:00:00Z',
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

  // Details 2: decoding and validation run in series.
  it.each([
    ['an unparseable timestamp', { observed_at: '2024-01-01' }, 'observed_at'],
    ['a string for an integer', { ref_id: 'x' }, 'ref_id'],
    ['a number for a string', { description: 5 }, 'description'],
    ['an object for a string', { name: { first: 'a' } }, 'name'],
  ])('a body failing at parse time (%s) yields a single fields[] entry', async (_name, broken, field) => {
    const res = await postJson({ name: '', external_key: 'a b', colour: 'red', ...broken });
    const error = expectErrorEnvelope(res, { status: 400, type: 'validation_error' });
    expect(error.fields!.map((f) => [f.field, f.code])).toEqual([[field, 'invalid_value']]);
    expect(error.detail).toBe(error.fields![0]!.message);
  });

  it('null for a non-nullable field is a validation failure: listed with the others', async () => {
    const error = expectErrorEnvelope(await postJson({ name: null, external_key: 'a b' }), {
      status: 400,
      type: 'validation_error',
    });
    expect(error.fields!.map((f) => f.field).sort()).toEqual(['external_key', 'name']);
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

  it.each([[5], [true], [{}], [['rfid']]])(
    'tag_type %j, not a string: invalid_value with params.allowed_values and the JSON types',
    async (value) => {
      const f = expectOneField(await postJson({ name: 'a', tags: [{ tag_type: value, value: 'v' }] }));
      expect(f).toEqual({
        field: 'tags[0].tag_type',
        code: 'invalid_value',
        message: expect.any(String),
        params: {
          allowed_values: [...PROBE_TAG_TYPES],
          expected_type: 'string',
          received_type: Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value,
        },
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
    ['2024-01-01T12:00:60Z'],
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

  it.each([['0000-01-01T00:00:00Z'], ['0001-01-01T00:30:00+01:00'], ['9999-12-31T23:59:59-01:00']])(
    '%s, RFC 3339 but out of range: invalid_value naming the range',
    async (value) => {
      for (const res of [
        await postJson({ name: 'a', observed_at: value }),
        await patchJson({ observed_at: value }),
      ]) {
        expect(expectOneField(res)).toMatchObject({
          field: 'observed_at',
          code: 'invalid_value',
          message: 'observed_at must be an instant from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z',
          params: { min: '0001-01-01T00:00:00.000Z', max: '9999-12-31T23:59:59.999Z' },
        });
      }
    },
  );

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
    // A leap second, where one is inserted (23:59:60 UTC): the next day's first second.
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2016-12-31T18:59:60.5-05:00', '2017-01-01T00:00:00.500Z'],
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
