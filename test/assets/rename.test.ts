/** POST /api/v1/assets/{asset_id}/rename: the rename rules and the decisions around them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetApi,
  assetsFixture,
  fieldCodes,
  ms,
  unique,
} from './helpers.js';

const BASE = '/api/v1/assets';
const rename = (api: AssetApi, id: number, body: unknown) => api.post(`${BASE}/${id}/rename`, body);

describe('POST /api/v1/assets/{asset_id}/rename', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  beforeAll(async () => {
    f = await assetsFixture();
    api = f.api;
  });
  afterAll(() => f.t.close());

  it('changes only external_key, advances updated_at, and answers data and descendant_count_affected 0', async () => {
    const a = await api.create({ tags: [{ tag_type: 'rfid', value: unique('T') }] });
    const key = unique('RENAMED');
    const res = await rename(api, a.id, { external_key: key });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'descendant_count_affected']);
    expect(body.descendant_count_affected).toBe(0);
    expect(body.data).toEqual({ ...a, external_key: key, updated_at: expect.any(String) });
    expect(ms(body.data.updated_at)).toBeGreaterThan(ms(a.updated_at));
    expect((await api.get(`${BASE}/${a.id}`)).json().data).toEqual(body.data);
    expect((await api.list(`?external_key=${key}`)).data.map((x) => x.id)).toEqual([a.id]);
    expect((await api.list(`?external_key=${a.external_key}`)).total_count).toBe(0);
  });

  it('renaming to the current value is a no-op that does not change updated_at', async () => {
    const a = await api.create({ external_key: unique('SAME') });
    const res = await rename(api, a.id, { external_key: a.external_key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: a, descendant_count_affected: 0 });
    expect((await api.get(`${BASE}/${a.id}`)).json().data.updated_at).toBe(a.updated_at);
  });

  it('renaming to a key held by another live asset is 409 conflict, and nothing changes', async () => {
    const taken = await api.create({ external_key: unique('TAKEN') });
    const a = await api.create();
    expectErrorEnvelope(await rename(api, a.id, { external_key: taken.external_key }), {
      status: 409,
      type: 'conflict',
    });
    expect((await api.get(`${BASE}/${a.id}`)).json().data).toEqual(a);
  });

  it('a key held only by a deleted asset can be taken; a key differing in case is another key', async () => {
    const old = await api.create({ external_key: unique('OLD') });
    await api.delete(`${BASE}/${old.id}`);
    const a = await api.create();
    expect((await rename(api, a.id, { external_key: old.external_key })).statusCode).toBe(200);
    const upper = old.external_key.toUpperCase();
    const res = await rename(api, a.id, { external_key: upper });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.external_key).toBe(upper);
  });

  it('the new external_key follows the external_key pattern and length', async () => {
    const a = await api.create();
    expect(fieldCodes(await rename(api, a.id, { external_key: 'A B' }))).toEqual([
      ['external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await rename(api, a.id, { external_key: 'A,B' }))).toEqual([
      ['external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await rename(api, a.id, { external_key: '' }))).toEqual([
      ['external_key', 'too_short'],
    ]);
    expect(fieldCodes(await rename(api, a.id, { external_key: 'K'.repeat(256) }))).toEqual([
      ['external_key', 'too_long'],
    ]);
    expect(fieldCodes(await rename(api, a.id, { external_key: null }))).toEqual([
      ['external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await rename(api, a.id, {}))).toEqual([['external_key', 'required']]);
    expect(fieldCodes(await rename(api, a.id, { external_key: 'OK-1', name: 'x' }))).toEqual([
      ['name', 'unknown_field'],
    ]);
    expect((await api.get(`${BASE}/${a.id}`)).json().data).toEqual(a);
  });

  it('renaming an asset that does not exist is 404', async () => {
    expectErrorEnvelope(await rename(api, 2147483647, { external_key: unique('X') }), {
      status: 404,
      type: 'not_found',
    });
  });

  it('renaming away from an auto key frees its slot for the next create', async () => {
    const own = await f.t.createOrg();
    const other = assetApi(f.t, (await own.key()).token);
    const first = await other.create();
    expect(first.external_key).toBe('ASSET-0001');
    await rename(other, first.id, { external_key: 'CUSTOM-1' });
    expect((await other.create()).external_key).toBe('ASSET-0001');
  });
});
