/**
 * POST /api/v1/assets (the create body and the Conventions field rules): metadata limits, and
 * the validity window's timestamps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValidationError } from '../helpers/error-envelope.js';
import { type AssetApi, type AssetsFixture, assetsFixture, daysFromNow, fieldCodes } from './helpers.js';

const BASE = '/api/v1/assets';

/** An object nested `levels` deep, the outermost being level 1. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < levels; i++) value = { down: value };
  return value;
}

describe('POST /api/v1/assets', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  beforeAll(async () => {
    f = await assetsFixture();
    api = f.api;
  });
  afterAll(() => f.t.close());

  it('metadata: any JSON object, returned as sent', async () => {
    const metadata = {
      '': 'empty key',
      text: 'ünïcödé 🚜 "quoted" \\ back',
      numbers: [0, -1, 1.5, 1e21, 12345678901234, -0.000001],
      flags: [true, false, null],
      nested: { list: [[], {}, [{ a: [1] }]] },
    };
    const a = await api.create({ metadata });
    expect(a.metadata).toEqual(metadata);
    expect((await api.get(`${BASE}/${a.id}`)).json().data.metadata).toEqual(metadata);
  });

  it('metadata: at most 65536 bytes as UTF-8 JSON, else too_long with params.max_bytes', async () => {
    // {"a":"…"} is 8 bytes around the string.
    expect((await api.create({ metadata: { a: 'x'.repeat(65528) } })).metadata.a).toHaveLength(65528);
    const over = expectValidationError(
      await api.post(BASE, { name: 'x', metadata: { a: 'x'.repeat(65529) } }),
    );
    expect(over).toEqual([
      { field: 'metadata', code: 'too_long', message: expect.any(String), params: { max_bytes: 65536 } },
    ]);
    // Bytes, not characters: é is two bytes.
    expect((await api.create({ metadata: { a: 'é'.repeat(32764) } })).metadata.a).toHaveLength(32764);
    expect(fieldCodes(await api.post(BASE, { name: 'x', metadata: { a: 'é'.repeat(32765) } }))).toEqual([
      ['metadata', 'too_long'],
    ]);
  });

  it('metadata: at most 10 levels deep (the object itself is level 1), else invalid_value with params.max_depth', async () => {
    expect((await api.create({ metadata: nested(10) })).metadata).toEqual(nested(10));
    expect(expectValidationError(await api.post(BASE, { name: 'x', metadata: nested(11) }))).toEqual([
      { field: 'metadata', code: 'invalid_value', message: expect.any(String), params: { max_depth: 10 } },
    ]);
    // Arrays are levels too.
    const arrays = { a: [[[[[[[[['ten']]]]]]]]] };
    expect((await api.create({ metadata: arrays })).metadata).toEqual(arrays);
    expect(fieldCodes(await api.post(BASE, { name: 'x', metadata: { a: [arrays.a] } }))).toEqual([
      ['metadata', 'invalid_value'],
    ]);
    // Very deep input is refused without overflowing anything.
    const deep = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
    const res = await f.t.app.inject({
      method: 'POST',
      url: BASE,
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      payload: `{"name":"deep","metadata":${deep}}`,
    });
    expect(fieldCodes(res)).toEqual([['metadata', 'invalid_value']]);
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'meta'],
    ['a number', 5],
  ])('metadata that is %s is invalid_value', async (_label, metadata) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', metadata }))).toEqual([
      ['metadata', 'invalid_value'],
    ]);
  });

  it.each([
    ['U+0000 in a value', { a: 'nul\u0000' }],
    ['U+0000 in a key', { 'k\u0000': 1 }],
  ])('metadata with %s is invalid_value, not an error of the database', async (_label, metadata) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', metadata }))).toEqual([
      ['metadata', 'invalid_value'],
    ]);
  });

  it('metadata with a number beyond the double range (1e400) is invalid_value, not stored as null', async () => {
    const res = await f.t.app.inject({
      method: 'POST',
      url: BASE,
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      payload: '{"name":"x","metadata":{"huge":1e400}}',
    });
    expect(fieldCodes(res)).toEqual([['metadata', 'invalid_value']]);
  });

  it('metadata with a number JSON cannot hold exactly (an int64 id, more digits than a double) is invalid_value on POST and PATCH, not stored rounded', async () => {
    const send = (method: 'POST' | 'PATCH', url: string, payload: string) =>
      f.t.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${api.token}`,
          'content-type': method === 'POST' ? 'application/json' : 'application/merge-patch+json',
        },
        payload,
      });
    const a = await api.create({ metadata: { erp_id: 1 } });
    for (const [literal, where] of [
      ['1796314808192123456', '{"erp_id":#}'],
      ['9007199254740993', '{"ids":[1,#]}'],
      ['0.1000000000000000055511151231257827', '{"deep":{"ratio":#}}'],
      ['1e-400', '{"tiny":#}'],
    ]) {
      const metadata = where!.replace('#', literal!);
      for (const res of [
        await send('POST', BASE, `{"name":"x","metadata":${metadata}}`),
        await send('PATCH', `${BASE}/${a.id}`, `{"metadata":${metadata}}`),
      ]) {
        expect(expectValidationError(res)).toEqual([
          {
            field: 'metadata',
            code: 'invalid_value',
            message: expect.stringContaining(`number ${literal} cannot be stored exactly`),
            params: {},
          },
        ]);
      }
    }
    expect((await api.get(`${BASE}/${a.id}`)).json().data.metadata).toEqual({ erp_id: 1 });
    // What a double holds is taken, however it is spelt; the same number as a string is kept as sent.
    const res = await send(
      'POST',
      BASE,
      '{"name":"x","metadata":{"a":9007199254740992,"b":0.30000000000000004,"c":1.0,"d":-0,"e":1E2,"f":"1796314808192123456"}}',
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.metadata).toEqual({
      a: 9007199254740992,
      b: 0.30000000000000004,
      c: 1,
      d: 0,
      e: 100,
      f: '1796314808192123456',
    });
  });

  it('metadata with a fraction of twenty digits or more is decoded as the number it is, not refused as an integer beyond int64', async () => {
    const res = await f.t.app.inject({
      method: 'POST',
      url: BASE,
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      payload:
        '{"name":"x","metadata":{"ratio":0.50000000000000000000,"scale":-12.2500000000000000000000e0}}',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.metadata).toEqual({ ratio: 0.5, scale: -12.25 });
  });

  it('valid_to <= valid_from is invalid_value on valid_to, also against the defaulted valid_from', async () => {
    const at = '2030-05-05T05:05:05.000Z';
    for (const validTo of [at, '2030-05-05T05:05:04.999Z', '2030-05-05T07:05:05+02:00']) {
      expect(
        expectValidationError(await api.post(BASE, { name: 'x', valid_from: at, valid_to: validTo })),
      ).toEqual([
        { field: 'valid_to', code: 'invalid_value', message: expect.any(String), params: expect.any(Object) },
      ]);
    }
    expect(fieldCodes(await api.post(BASE, { name: 'x', valid_to: daysFromNow(-1) }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    const ok = await api.create({ valid_from: at, valid_to: '2030-05-05T05:05:05.001Z' });
    expect(ok.valid_to).toBe('2030-05-05T05:05:05.001Z');
  });

  it('timestamps: any offset and 0 to 9 fractional digits are accepted, digits below the millisecond truncated', async () => {
    const a = await api.create({
      valid_from: '2021-03-04T05:06:07.123456789+02:30',
      valid_to: '2040-01-01T00:00:00Z',
    });
    expect(a.valid_from).toBe('2021-03-04T02:36:07.123Z');
    expect(a.valid_to).toBe('2040-01-01T00:00:00.000Z');
    const b = await api.create({ valid_from: '2021-03-04t05:06:07.9z' });
    expect(b.valid_from).toBe('2021-03-04T05:06:07.900Z');
  });

  it.each([
    ['the zero instant', '0001-01-01T00:00:00Z'],
    ['the Unix epoch', '1970-01-01T00:00:00.000Z'],
    ['the Unix epoch in another offset', '1970-01-01T01:00:00+01:00'],
  ])('timestamp sentinel %s is invalid_value', async (_label, value) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', valid_from: value }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
  });

  it.each([['2024-01-01'], ['2024/01/01 10:00:00'], [''], ['2024-02-30T00:00:00Z'], ['yesterday']])(
    'a non-RFC 3339 timestamp %j says the field must be an RFC 3339 timestamp',
    async (value) => {
      const [field] = expectValidationError(await api.post(BASE, { name: 'x', valid_to: value }));
      expect(field).toMatchObject({ field: 'valid_to', code: 'invalid_value' });
      expect(field!.message).toMatch(/RFC 3339/);
    },
  );

  it.each([
    ['year 0000', '0000-06-01T00:00:00Z'],
    ['an offset pushing 0001 into year 0', '0001-01-01T00:30:00+01:00'],
    ['an offset pushing 9999 into year 10000', '9999-12-31T23:30:00-01:00'],
  ])('a timestamp outside the years 0001-9999 (%s) is invalid_value', async (_label, value) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', valid_from: value }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
  });

  it('the earliest and latest storable instants round-trip', async () => {
    const a = await api.create({
      valid_from: '0001-01-01T00:00:00.001Z',
      valid_to: '9999-12-31T23:59:59.999999Z',
    });
    expect([a.valid_from, a.valid_to]).toEqual(['0001-01-01T00:00:00.001Z', '9999-12-31T23:59:59.999Z']);
  });
});
