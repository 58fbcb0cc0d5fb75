/**
 * POST /api/v1/assets (the create body, the POST asset rules and the decisions of
 * docs/master-data.md "Assets"): the 201 response and its defaults, read-only location fields,
 * caller-supplied and automatic external keys, and tags created with the asset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetApi,
  assetsFixture,
  fieldCodes,
  ISO_MS,
  ms,
  unique,
} from './helpers.js';

const BASE = '/api/v1/assets';

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
    ).toEqual([['tags[0].id', 'read_only']]);
  });
});
