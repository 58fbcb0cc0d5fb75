/**
 * POST /api/v1/assets: the create body, the POST asset rules, the Conventions field rules
 * and the decisions of docs/master-data.md "Assets".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetApi,
  assetsFixture,
  daysFromNow,
  fieldCodes,
  ISO_MS,
  ms,
  unique,
} from './helpers.js';

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

  /** A key of a fresh organization, for the tests that count auto-key slots. */
  async function freshOrgApi(): Promise<AssetApi> {
    const org = await f.t.createOrg();
    return assetApi(f.t, (await org.key()).token);
  }

  it('answers 201 Created with Location /api/v1/assets/{id} and data: <Asset>', async () => {
    const res = await api.post(BASE, { name: 'Forklift 7' });
    expect(res.statusCode).toBe(201);
    const { data } = res.json() as { data: Asset };
    expect(res.headers.location).toBe(`/api/v1/assets/${data.id}`);
    expect(Object.keys(res.json())).toEqual(['data']);
    const get = await api.get(res.headers.location as string);
    expect(get.json()).toEqual({ data });
  });

  it('returns the read shape with the defaults: is_active true, valid_from the creation instant, metadata {}, no tags', async () => {
    const before = Date.now();
    const a = await api.create({ name: 'Defaults' });
    expect(Object.keys(a).sort()).toEqual(
      [
        'id',
        'external_key',
        'name',
        'description',
        'is_active',
        'metadata',
        'location_id',
        'location_external_key',
        'tags',
        'valid_from',
        'valid_to',
        'created_at',
        'updated_at',
        'deleted_at',
      ].sort(),
    );
    expect(a).toMatchObject({
      name: 'Defaults',
      description: null,
      is_active: true,
      metadata: {},
      location_id: null,
      location_external_key: null,
      tags: [],
      valid_to: null,
      deleted_at: null,
    });
    for (const t of [a.valid_from, a.created_at, a.updated_at]) expect(t).toMatch(ISO_MS);
    expect(a.valid_from).toBe(a.created_at);
    expect(a.updated_at).toBe(a.created_at);
    expect(ms(a.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(ms(a.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('stores every create field as sent', async () => {
    const body = {
      name: 'Pallet jack – Zürich',
      external_key: unique('PJ'),
      description: 'Line one\nline two\ttabbed\r\n',
      is_active: false,
      metadata: { serial: 'SN-1', dims: [1.5, 2, { unit: 'm' }], ok: null, nested: { deep: { er: true } } },
      tags: [
        { tag_type: 'rfid', value: unique('E280') },
        { tag_type: 'barcode', value: unique('0123') },
      ],
      valid_from: '2020-01-02T03:04:05.678Z',
      valid_to: '2999-01-01T00:00:00.000Z',
    };
    const a = await api.create(body);
    expect(a).toMatchObject({ ...body, tags: body.tags.map((t) => ({ ...t, id: expect.any(Number) })) });
  });

  it('POST rule: location_id in the body is 400 read_only', async () => {
    const res = await api.post(BASE, { name: 'x', location_id: 1 });
    expect(expectValidationError(res)).toEqual([
      { field: 'location_id', code: 'read_only', message: expect.any(String), params: {} },
    ]);
  });

  it('POST rule: location_external_key in the body is 400 read_only, null included; both give two entries', async () => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', location_external_key: null }))).toEqual([
      ['location_external_key', 'read_only'],
    ]);
    expect(
      fieldCodes(await api.post(BASE, { name: 'x', location_id: 3, location_external_key: 'DOCK' })),
    ).toEqual([
      ['location_id', 'read_only'],
      ['location_external_key', 'read_only'],
    ]);
  });

  it('POST rule: a caller-supplied external_key held by a live asset is 409 conflict', async () => {
    const key = unique('DUP');
    await api.create({ external_key: key });
    const res = await api.post(BASE, { name: 'again', external_key: key });
    expectErrorEnvelope(res, { status: 409, type: 'conflict' });
    expect((await api.list(`?external_key=${key}`)).total_count).toBe(1);
  });

  it('external_key matching is case-sensitive: keys differing only in case are distinct', async () => {
    const key = unique('case');
    const lower = await api.create({ external_key: key });
    const upper = await api.create({ external_key: key.toUpperCase() });
    expect(upper.id).not.toBe(lower.id);
    expect(upper.external_key).toBe(key.toUpperCase());
  });

  it("a deleted asset's external_key is reusable at once", async () => {
    const key = unique('REUSE');
    const first = await api.create({ external_key: key });
    expect((await api.delete(`${BASE}/${first.id}`)).statusCode).toBe(204);
    const second = await api.create({ external_key: key });
    expect(second.id).not.toBe(first.id);
  });

  it('auto key: ASSET-NNNN, the lowest slot no live asset holds, reusing slots freed by delete and rename', async () => {
    const own = await freshOrgApi();
    const keys = async (n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await own.create()).external_key);
      return out;
    };
    expect(await keys(3)).toEqual(['ASSET-0001', 'ASSET-0002', 'ASSET-0003']);
    // A caller-supplied key of the same form holds its slot.
    await own.create({ external_key: 'ASSET-0005' });
    expect(await keys(2)).toEqual(['ASSET-0004', 'ASSET-0006']);
    // Only the canonical form holds a slot; other spellings are ordinary keys.
    await own.create({ external_key: 'ASSET-00007' });
    await own.create({ external_key: 'asset-0007' });
    expect(await keys(1)).toEqual(['ASSET-0007']);

    const all = (await own.list('?limit=200')).data;
    const byKey = new Map(all.map((a) => [a.external_key, a.id]));
    expect((await own.delete(`${BASE}/${byKey.get('ASSET-0002')}`)).statusCode).toBe(204);
    const renamed = await own.post(`${BASE}/${byKey.get('ASSET-0003')}/rename`, { external_key: 'NAMED' });
    expect(renamed.statusCode).toBe(200);
    expect(await keys(3)).toEqual(['ASSET-0002', 'ASSET-0003', 'ASSET-0008']);
  });

  it('auto key: 20 parallel creates without keys get 20 distinct keys', async () => {
    const own = await freshOrgApi();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => own.post(BASE, { name: `P${i}` })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    const keys = results.map((r) => (r.json() as { data: Asset }).data.external_key).sort();
    expect(keys).toEqual(Array.from({ length: 20 }, (_, i) => `ASSET-${String(i + 1).padStart(4, '0')}`));
  });

  it('auto key: after concurrent creates and deletes the next key is still the lowest free slot', async () => {
    const own = await freshOrgApi();
    const first = await Promise.all(Array.from({ length: 15 }, () => own.create()));
    const doomed = first.filter((_, i) => i % 3 === 1);
    await Promise.all([
      ...doomed.map((a) => own.delete(`${BASE}/${a.id}`)),
      ...Array.from({ length: 10 }, () => own.create()),
    ]);
    const held = new Set((await own.list('?limit=200')).data.map((a) => a.external_key));
    let lowest = 1;
    while (held.has(`ASSET-${String(lowest).padStart(4, '0')}`)) lowest++;
    expect((await own.create()).external_key).toBe(`ASSET-${String(lowest).padStart(4, '0')}`);
  });

  it('auto key: past ASSET-9999 the number grows a digit (ASSET-10000)', async () => {
    const own = await freshOrgApi();
    const first = await own.create();
    expect(first.external_key).toBe('ASSET-0001');
    // Slots 2..9999 filled directly; only the boundary matters here.
    await f.t.database.db.pool.query(
      `INSERT INTO assets (org_id, external_key, name)
       SELECT org_id, 'ASSET-' || lpad(g::text, 4, '0'), 'filler' FROM assets, generate_series(2, 9999) g
       WHERE id = $1`,
      [first.id],
    );
    expect((await own.create()).external_key).toBe('ASSET-10000');
  });

  it('creates with tags in the same transaction; a tag already attached is 409 and nothing is created', async () => {
    const value = unique('TAG');
    const a = await api.create({ tags: [{ tag_type: 'ble', value }] });
    expect(a.tags).toEqual([{ id: expect.any(Number), tag_type: 'ble', value }]);
    const name = unique('Orphan');
    const res = await api.post(BASE, {
      name,
      tags: [
        { tag_type: 'rfid', value: unique('FREE') },
        { tag_type: 'ble', value },
      ],
    });
    expectErrorEnvelope(res, { status: 409, type: 'conflict' });
    expect((await api.list(`?q=${name}`)).total_count).toBe(0);
    // The same pair twice in one body is the same conflict.
    const twice = { tag_type: 'rfid', value: unique('TWICE') };
    expectErrorEnvelope(await api.post(BASE, { name: 'x', tags: [twice, twice] }), { status: 409 });
  });

  it('tags: null and [] mean none; the same value under another tag_type is another tag', async () => {
    expect((await api.create({ tags: null })).tags).toEqual([]);
    expect((await api.create({ tags: [] })).tags).toEqual([]);
    const value = unique('SAME');
    await api.create({ tags: [{ tag_type: 'rfid', value }] });
    expect((await api.create({ tags: [{ tag_type: 'barcode', value }] })).tags).toHaveLength(1);
  });

  it('tags: tag_type omitted or null is required; an unlisted tag_type is invalid_value with allowed_values', async () => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', tags: [{ value: 'v' }] }))).toEqual([
      ['tags[0].tag_type', 'required'],
    ]);
    expect(fieldCodes(await api.post(BASE, { name: 'x', tags: [{ tag_type: null, value: 'v' }] }))).toEqual([
      ['tags[0].tag_type', 'required'],
    ]);
    const fields = expectValidationError(
      await api.post(BASE, { name: 'x', tags: [{ tag_type: 'nfc', value: 'v' }] }),
    );
    expect(fields).toEqual([
      {
        field: 'tags[0].tag_type',
        code: 'invalid_value',
        message: expect.any(String),
        params: { allowed_values: ['rfid', 'ble', 'barcode'] },
      },
    ]);
    expect(fieldCodes(await api.post(BASE, { name: 'x', tags: [{ tag_type: 'rfid', value: '' }] }))).toEqual([
      ['tags[0].value', 'too_short'],
    ]);
    expect(
      fieldCodes(await api.post(BASE, { name: 'x', tags: [{ tag_type: 'rfid', value: 'v', id: 3 }] })),
    ).toEqual([['tags[0].id', 'unknown_field']]);
  });

  it('name is required', async () => {
    expect(fieldCodes(await api.post(BASE, {}))).toEqual([['name', 'required']]);
  });

  it.each([
    ['empty', '', 'too_short'],
    ['leading whitespace', ' Pump', 'invalid_value'],
    ['trailing whitespace', 'Pump ', 'invalid_value'],
    ['a newline', 'Pump\nA', 'invalid_value'],
    ['a tab', 'Pump\tA', 'invalid_value'],
    ['DEL', 'Pump\u007f', 'invalid_value'],
    ['NUL', '\u0000', 'invalid_value'],
    ['256 characters', 'n'.repeat(256), 'too_long'],
    ['null', null, 'invalid_value'],
    ['a number', 7, 'invalid_value'],
  ])('name with %s is rejected (%s)', async (_label, name, code) => {
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

  it.each([
    ['a space', 'A B', 'invalid_value'],
    ['an underscore', 'A_B', 'invalid_value'],
    ['a comma', 'A,B', 'invalid_value'],
    ['a non-ASCII letter', 'Ä1', 'invalid_value'],
    ['empty', '', 'too_short'],
    ['256 characters', 'K'.repeat(256), 'too_long'],
    ['null', null, 'invalid_value'],
  ])('external_key with %s is rejected (%s)', async (_label, key, code) => {
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
    ['id', 5],
    ['created_at', '2024-01-01T00:00:00Z'],
    ['deleted_at', null],
    ['tag_values', 'x'],
    ['nonsense', true],
  ])('an undeclared body key %s is unknown_field', async (key, value) => {
    expect(fieldCodes(await api.post(BASE, { name: 'x', [key]: value }))).toEqual([[key, 'unknown_field']]);
  });

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
