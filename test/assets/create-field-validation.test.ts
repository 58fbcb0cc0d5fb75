/**
 * POST /api/v1/assets (the create body and the Conventions field rules): name, description and
 * external_key, null where null is refused, and undeclared keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { REFUSED_EXTERNAL_KEYS, refusedNames } from '../helpers/master-data-fields.js';
import { type AssetApi, type AssetsFixture, assetsFixture, fieldCodes, unique } from './helpers.js';

const BASE = '/api/v1/assets';

describe('POST /api/v1/assets', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  beforeAll(async () => {
    f = await assetsFixture();
    api = f.api;
  });
  afterAll(() => f.t.close());

  it('name is required', async () => {
    expect(fieldCodes(await api.post(BASE, {}))).toEqual([['name', 'required']]);
  });

  it.each(refusedNames('Pump'))('name with %s is rejected (%s)', async (_label, name, code) => {
    expect(fieldCodes(await api.post(BASE, { name }))).toEqual([['name', code]]);
  });

  it('an unpaired surrogate anywhere in the body is bad_request (the decoder refuses it), and nothing is stored', async () => {
    for (const body of [
      { name: 'Pump \ud800' },
      { name: 'x', description: '\udc00 tail' },
      { name: 'x', metadata: { a: ['\ud83d'] } },
      { name: 'x', metadata: { '\udfff': 1 } },
    ]) {
      expectErrorEnvelope(await api.post(BASE, body), { status: 400, type: 'bad_request' });
    }
    expect((await api.list('?q=pump%20')).data.map((a) => a.name)).not.toContain('Pump \ufffd');
  });

  it('a body whose bytes are not UTF-8 is bad_request, POST and PATCH, and nothing is stored or changed', async () => {
    const asset = await api.create({ name: 'Valve' });
    const bytes = (json: string, bad: number[]) =>
      Buffer.concat([Buffer.from(json.slice(0, -2)), Buffer.from(bad), Buffer.from(json.slice(-2))]);
    // A stray Latin-1 byte, a truncated sequence, an overlong NUL, an encoded surrogate.
    for (const bad of [[0xe9], [0xe2, 0x82], [0xc0, 0x80], [0xed, 0xa0, 0x80]]) {
      for (const [method, url, type] of [
        ['POST', BASE, 'application/json'],
        ['PATCH', `${BASE}/${asset.id}`, 'application/merge-patch+json'],
      ] as const) {
        const res = await f.t.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${api.token}`, 'content-type': type },
          payload: bytes('{"name":"Caf"}', bad),
        });
        const error = expectErrorEnvelope(res, { status: 400, type: 'bad_request' });
        expect(error.detail).toBe('Request body is not valid UTF-8');
        expect(error).not.toHaveProperty('fields');
      }
    }
    expect((await api.list('?q=caf')).total_count).toBe(0);
    expect((await api.get(`${BASE}/${asset.id}`)).json().data.name).toBe('Valve');
  });

  it('name accepts 255 characters, inner spaces, non-ASCII letters and astral characters', async () => {
    expect((await api.create({ name: 'n'.repeat(255) })).name).toHaveLength(255);
    expect((await api.create({ name: 'Pump  B – Zürich 🚜' })).name).toBe('Pump  B – Zürich 🚜');
    expect((await api.create({ name: 'x' })).name).toBe('x');
  });

  it('description: empty is too_short with params.min_length 1; over 1024 too_long; control characters invalid_value; null clears', async () => {
    expect(expectValidationError(await api.post(BASE, { name: 'x', description: '' }))).toEqual([
      { field: 'description', code: 'too_short', message: expect.any(String), params: { min_length: 1 } },
    ]);
    expect(fieldCodes(await api.post(BASE, { name: 'x', description: 'd'.repeat(1025) }))).toEqual([
      ['description', 'too_long'],
    ]);
    expect(fieldCodes(await api.post(BASE, { name: 'x', description: 'bell\u0007' }))).toEqual([
      ['description', 'invalid_value'],
    ]);
    expect((await api.create({ description: 'd'.repeat(1024) })).description).toHaveLength(1024);
    expect((await api.create({ description: null })).description).toBeNull();
  });

  it.each(REFUSED_EXTERNAL_KEYS)('external_key with %s is rejected (%s)', async (_label, key, code) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', external_key: key }))).toEqual([
      ['external_key', code],
    ]);
  });

  it('external_key accepts 255 characters of letters, digits and hyphens', async () => {
    const key = `${unique('K')}-${'k'.repeat(200)}`.slice(0, 255);
    expect((await api.create({ external_key: key })).external_key).toBe(key);
  });

  it('is_active, metadata and valid_from reject null (invalid_value); valid_to null is open-ended', async () => {
    for (const field of ['is_active', 'metadata', 'valid_from']) {
      const fields = expectValidationError(await api.post(BASE, { name: 'x', [field]: null }));
      expect(fields).toEqual([
        { field, code: 'invalid_value', message: expect.any(String), params: expect.any(Object) },
      ]);
      expect(fields[0]!.params.received_type).toBe('null');
    }
    expect((await api.create({ valid_to: null })).valid_to).toBeNull();
  });

  it.each([
    ['tag_values', 'x'],
    ['nonsense', true],
  ])('an undeclared body key %s is unknown_field', async (key, value) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', [key]: value }))).toEqual([[key, 'unknown_field']]);
  });

  // On the read schema, so not unknown (API-SPEC field codes), and the server's to set.
  it.each([
    ['id', 5],
    ['created_at', '2024-01-01T00:00:00Z'],
    ['updated_at', '2024-01-01T00:00:00Z'],
    ['deleted_at', null],
    ['location_id', 3],
    ['location_external_key', 'DOCK'],
  ])('a server-managed field %s of the read shape is read_only', async (key, value) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', [key]: value }))).toEqual([[key, 'read_only']]);
  });

  it('a server-managed field is checked for its type first: an id past the ceiling is too_large', async () => {
    const fields = expectValidationError(await api.post(BASE, { name: 'x', id: 2147483648 }));
    expect(fields).toEqual([
      { field: 'id', code: 'too_large', message: expect.any(String), params: { max: 2147483647 } },
    ]);
    expect(fieldCodes(await api.post(BASE, { name: 'x', location_id: 2147483648 }))).toEqual([
      ['location_id', 'too_large'],
    ]);
    expect(fieldCodes(await api.post(BASE, { name: 'x', created_at: 'yesterday' }))).toEqual([
      ['created_at', 'invalid_value'],
    ]);
  });
});
