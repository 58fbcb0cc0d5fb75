/**
 * POST /api/v1/locations (API-SPEC Locations, Location read shape and create body,
 * Conventions field rules) and GET of one location.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { REFUSED_EXTERNAL_KEYS, refusedNames } from '../helpers/master-data-fields.js';
import {
  BASE,
  type Client,
  client,
  expectConflict,
  expectNotFound,
  fieldCodes,
  setWindow,
} from './helpers.js';

const WIRE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const READ_SHAPE_KEYS = [
  'created_at',
  'deleted_at',
  'description',
  'external_key',
  'id',
  'is_active',
  'name',
  'parent_external_key',
  'parent_id',
  'tags',
  'updated_at',
  'valid_from',
  'valid_to',
];

let t: TestApp;
let c: Client;
beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
});
afterAll(() => t.close());

describe('POST /api/v1/locations', () => {
  it('answers 201 with a Location header and data: <Location> in the read shape', async () => {
    const res = await c.post(BASE, { name: 'Main warehouse', external_key: 'WH-1', description: 'North' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['data']);
    const data = body.data;
    expect(res.headers.location).toBe(`/api/v1/locations/${data.id}`);
    expect(Object.keys(data).sort()).toEqual(READ_SHAPE_KEYS);
    expect(data).toMatchObject({
      external_key: 'WH-1',
      name: 'Main warehouse',
      description: 'North',
      parent_id: null,
      parent_external_key: null,
      tags: [],
      valid_to: null,
      deleted_at: null,
    });
    for (const k of ['valid_from', 'created_at', 'updated_at']) expect(data[k]).toMatch(WIRE);
    expect(await c.fetch(data.id)).toEqual(data);
  });

  it('defaults is_active to true and valid_from to the creation instant', async () => {
    const before = Date.now();
    const data = await c.create({ name: 'Defaults' });
    expect(data.is_active).toBe(true);
    expect(data.valid_from).toBe(data.created_at);
    expect(data.updated_at).toBe(data.created_at);
    expect(Date.parse(data.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(data.description).toBeNull();
  });

  it('stores every create field as sent (is_active false, window, description with tabs and newlines)', async () => {
    const data = await c.create({
      name: 'Dock 7',
      is_active: false,
      description: 'line 1\nline 2\twith tab\r\n',
      valid_from: '2020-05-06T07:08:09.5+02:00',
      valid_to: '2099-01-01T00:00:00Z',
    });
    expect(data).toMatchObject({
      is_active: false,
      description: 'line 1\nline 2\twith tab\r\n',
      valid_from: '2020-05-06T05:08:09.500Z',
      valid_to: '2099-01-01T00:00:00.000Z',
    });
  });

  it('truncates inbound fractional digits below the millisecond toward zero', async () => {
    const data = await c.create({ name: 'Precise', valid_from: '2021-01-02T03:04:05.123999999Z' });
    expect(data.valid_from).toBe('2021-01-02T03:04:05.123Z');
  });

  it('without external_key assigns LOC-NNNN, the lowest unused slot, reusing freed slots', async () => {
    const own = await client(t);
    const [a, b, d] = [
      await own.create({ name: 'a' }),
      await own.create({ name: 'b' }),
      await own.create({ name: 'd' }),
    ];
    expect([a.external_key, b.external_key, d.external_key]).toEqual(['LOC-0001', 'LOC-0002', 'LOC-0003']);
    // A deleted slot is reused first.
    expect((await own.del(`${BASE}/${b.id}`)).statusCode).toBe(204);
    expect((await own.create({ name: 'e' })).external_key).toBe('LOC-0002');
    // A renamed-away slot is free too.
    expect((await own.post(`${BASE}/${a.id}/rename`, { external_key: 'NOT-AUTO' })).statusCode).toBe(200);
    expect((await own.create({ name: 'f' })).external_key).toBe('LOC-0001');
    // A caller-supplied key in the auto form occupies its slot.
    await own.create({ name: 'g', external_key: 'LOC-0004' });
    expect((await own.create({ name: 'h' })).external_key).toBe('LOC-0005');
    // Keys that only look alike (extra zero, other case) do not.
    await own.create({ name: 'i', external_key: 'LOC-00006' });
    await own.create({ name: 'j', external_key: 'loc-0006' });
    expect((await own.create({ name: 'k' })).external_key).toBe('LOC-0006');
  });

  it('20 parallel creates get 20 distinct keys, LOC-0001 to LOC-0020', async () => {
    const own = await client(t);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => own.post(BASE, { name: `P${i}` })),
    );
    for (const res of results) expect(res.statusCode, res.body).toBe(201);
    const keys = results.map((r) => r.json().data.external_key).sort();
    expect(keys).toEqual(Array.from({ length: 20 }, (_, i) => `LOC-${String(i + 1).padStart(4, '0')}`));
  });

  it('a caller-supplied external_key held by a live location is 409 conflict', async () => {
    await c.create({ name: 'Original', external_key: 'DUP-1' });
    const error = expectConflict(await c.post(BASE, { name: 'Copy', external_key: 'DUP-1' }));
    expect(error.detail).toContain('DUP-1');
  });

  it('keys that differ only in case are distinct', async () => {
    await c.create({ name: 'upper', external_key: 'CASE-KEY' });
    const lower = await c.create({ name: 'lower', external_key: 'case-key' });
    expect(lower.external_key).toBe('case-key');
  });

  it("a soft-deleted location's external_key is immediately reusable", async () => {
    const first = await c.create({ name: 'gone', external_key: 'REUSE-1' });
    expect((await c.del(`${BASE}/${first.id}`)).statusCode).toBe(204);
    const second = await c.create({ name: 'again', external_key: 'REUSE-1' });
    expect(second.id).not.toBe(first.id);
  });

  it('attaches tags given on create; a tag value in use is 409 and nothing is created', async () => {
    const data = await c.create({
      name: 'Tagged',
      external_key: 'TAGGED-1',
      tags: [
        { tag_type: 'rfid', value: 'E200-1' },
        { tag_type: 'barcode', value: 'BC-1' },
      ],
    });
    expect(data.tags.map((tag) => [tag.tag_type, tag.value])).toEqual([
      ['rfid', 'E200-1'],
      ['barcode', 'BC-1'],
    ]);
    expect(data.tags.every((tag) => Number.isInteger(tag.id))).toBe(true);
    expectConflict(
      await c.post(BASE, {
        name: 'Clash',
        external_key: 'TAGGED-2',
        tags: [{ tag_type: 'rfid', value: 'E200-1' }],
      }),
    );
    const list = await c.list(`${BASE}?external_key=TAGGED-2`);
    expect(list.total_count).toBe(0);
    expect((await c.create({ name: 'null tags', tags: null })).tags).toEqual([]);
  });

  it('tags on create follow the TagRequest rules', async () => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', tags: [{ value: 'v' }] }))).toEqual([
      ['tags[0].tag_type', 'required'],
    ]);
    const fields = expectValidationError(
      await c.post(BASE, { name: 'x', tags: [{ tag_type: 'nfc', value: 'v' }] }),
    );
    expect(fields[0]).toMatchObject({ field: 'tags[0].tag_type', code: 'invalid_value' });
    expect(fields[0]!.params.allowed_values).toEqual(['rfid', 'ble', 'barcode']);
  });

  it('metadata on a location write is unknown_field (locations carry no metadata)', async () => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', metadata: {} }))).toEqual([
      ['metadata', 'unknown_field'],
    ]);
  });

  it.each([
    ['tree_path', '1/2'],
    ['depth', 1],
    ['location_id', 3],
    ['nonsense', true],
  ])('an undeclared body key %s is unknown_field', async (key, value) => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', [key]: value }))).toEqual([[key, 'unknown_field']]);
  });

  // On the read schema, so not unknown (API-SPEC field codes), and the server's to set.
  it.each([
    ['id', 5],
    ['created_at', '2024-01-01T00:00:00Z'],
    ['updated_at', '2024-01-01T00:00:00Z'],
    ['deleted_at', null],
  ])('a server-managed field %s of the read shape is read_only', async (key, value) => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', [key]: value }))).toEqual([[key, 'read_only']]);
  });

  it('an id past the ceiling is too_large before it is read_only', async () => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', id: 2147483648 }))).toEqual([['id', 'too_large']]);
  });

  it('name is required', async () => {
    expect(fieldCodes(await c.post(BASE, {}))).toEqual([['name', 'required']]);
  });

  it.each(refusedNames('Hall'))('name with %s is rejected (%s)', async (_label, name, code) => {
    expect(fieldCodes(await c.post(BASE, { name }))).toEqual([['name', code]]);
  });

  it('name accepts 255 characters, inner spaces and non-ASCII letters', async () => {
    expect((await c.create({ name: 'n'.repeat(255) })).name).toHaveLength(255);
    expect((await c.create({ name: 'Hall  B – Zürich' })).name).toBe('Hall  B – Zürich');
    expect((await c.create({ name: 'x' })).name).toBe('x');
  });

  it('description: empty is too_short with params.min_length 1; over 1024 too_long; control characters invalid_value', async () => {
    const empty = expectValidationError(await c.post(BASE, { name: 'x', description: '' }));
    expect(empty).toEqual([
      { field: 'description', code: 'too_short', message: expect.any(String), params: { min_length: 1 } },
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', description: 'd'.repeat(1025) }))).toEqual([
      ['description', 'too_long'],
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', description: 'bell\u0007' }))).toEqual([
      ['description', 'invalid_value'],
    ]);
    expect((await c.create({ name: 'x', description: 'd'.repeat(1024) })).description).toHaveLength(1024);
    expect((await c.create({ name: 'x', description: null })).description).toBeNull();
  });

  it.each(REFUSED_EXTERNAL_KEYS)('external_key with %s is rejected (%s)', async (_label, key, code) => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', external_key: key }))).toEqual([
      ['external_key', code],
    ]);
  });

  it('is_active null is invalid_value; valid_from null is invalid_value; valid_to null is open-ended', async () => {
    const fields = expectValidationError(await c.post(BASE, { name: 'x', is_active: null }));
    expect(fields).toEqual([
      {
        field: 'is_active',
        code: 'invalid_value',
        message: expect.any(String),
        params: { expected_type: 'boolean', received_type: 'null' },
      },
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', valid_from: null }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
    expect((await c.create({ name: 'x', valid_to: null })).valid_to).toBeNull();
  });

  it('valid_to less than or equal to valid_from is invalid_value on valid_to', async () => {
    const from = '2030-01-01T00:00:00Z';
    expect(fieldCodes(await c.post(BASE, { name: 'x', valid_from: from, valid_to: from }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    expect(
      fieldCodes(await c.post(BASE, { name: 'x', valid_from: from, valid_to: '2029-12-31T23:59:59.999Z' })),
    ).toEqual([['valid_to', 'invalid_value']]);
    // Equal instants in other forms are equal too.
    expect(
      fieldCodes(
        await c.post(BASE, { name: 'x', valid_from: from, valid_to: '2030-01-01T01:00:00.0009+01:00' }),
      ),
    ).toEqual([['valid_to', 'invalid_value']]);
    // With valid_from defaulted to now, a past valid_to is before it.
    expect(fieldCodes(await c.post(BASE, { name: 'x', valid_to: '2020-01-01T00:00:00Z' }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
  });

  it.each([
    ['0001-01-01T00:00:00Z'],
    ['1970-01-01T00:00:00Z'],
    ['1970-01-01T01:00:00+01:00'],
    ['0001-01-01T00:00:00.000000Z'],
  ])('the sentinel instant %s is invalid_value', async (value) => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', valid_from: value }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
  });

  it.each([['2024-01-02'], ['2024/01/02T00:00:00Z'], [''], ['2024-13-01T00:00:00Z'], ['yesterday']])(
    'a non-RFC 3339 valid_from %j is rejected with a message saying so',
    async (value) => {
      const fields = expectValidationError(await c.post(BASE, { name: 'x', valid_from: value }));
      expect(fields).toHaveLength(1);
      expect(fields[0]).toMatchObject({ field: 'valid_from', code: 'invalid_value' });
      expect(fields[0]!.message).toMatch(/RFC 3339/);
    },
  );

  it('an instant outside years 0001-9999 UTC is invalid_value', async () => {
    for (const value of ['0000-06-01T00:00:00Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:59:59-01:00']) {
      expect(fieldCodes(await c.post(BASE, { name: 'x', valid_from: value })), value).toEqual([
        ['valid_from', 'invalid_value'],
      ]);
    }
    expect((await c.create({ name: 'x', valid_to: '9999-12-31T23:59:59.999Z' })).valid_to).toBe(
      '9999-12-31T23:59:59.999Z',
    );
  });

  it('parent_id above 2147483647 is too_large with params.max; 0 is invalid_value', async () => {
    expect(expectValidationError(await c.post(BASE, { name: 'x', parent_id: 2147483648 }))).toEqual([
      { field: 'parent_id', code: 'too_large', message: expect.any(String), params: { max: 2147483647 } },
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_id: 0 }))).toEqual([
      ['parent_id', 'invalid_value'],
    ]);
  });

  it('an integer beyond the decoder range is bad_request', async () => {
    expectErrorEnvelope(await c.post(BASE, '{"name":"x","parent_id":99999999999999999999}'), {
      status: 400,
      type: 'bad_request',
    });
  });

  it('reports several field violations at once, detail naming the first and the count', async () => {
    const res = await c.post(BASE, { name: '', external_key: 'a b', is_active: null });
    const fields = expectValidationError(res);
    expect(fields.map((f) => f.field).sort()).toEqual(['external_key', 'is_active', 'name']);
    expect(res.json().error.detail).toMatch(/\(and 2 more validation errors\)$/);
  });

  it('a body failing at parse time yields that single entry (Errors, Details 2)', async () => {
    const res = await c.post(BASE, { name: '', external_key: 'a b', is_active: 'yes' });
    expect(fieldCodes(res)).toEqual([['is_active', 'invalid_value']]);
    expect(res.json().error.detail).not.toMatch(/more validation errors/);
  });
});

describe('GET /api/v1/locations/{location_id}', () => {
  it('skips the temporal-validity filter: future-dated and expired locations are found', async () => {
    const future = await c.create({ name: 'future', valid_from: '2999-01-01T00:00:00Z' });
    const expired = await c.create({ name: 'expired' });
    await setWindow(t, expired.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    expect((await c.fetch(future.id)).valid_from).toBe('2999-01-01T00:00:00.000Z');
    expect((await c.fetch(expired.id)).valid_to).toBe('2001-01-01T00:00:00.000Z');
  });

  it('is 404 for a missing id and for a soft-deleted location', async () => {
    expectNotFound(await c.get(`${BASE}/2147483647`));
    const gone = await c.create({ name: 'gone' });
    expect((await c.del(`${BASE}/${gone.id}`)).statusCode).toBe(204);
    expectNotFound(await c.get(`${BASE}/${gone.id}`));
  });

  it('answers HEAD like GET with an empty body', async () => {
    const loc = await c.create({ name: 'head' });
    const res = await t.app.inject({
      method: 'HEAD',
      url: `${BASE}/${loc.id}`,
      headers: { authorization: `Bearer ${c.token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });
});
