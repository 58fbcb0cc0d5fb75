/**
 * GET and DELETE /api/v1/assets/{asset_id}: the detail read (no temporal filter), soft
 * delete and what it releases, and the liveness of a deleted asset elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetsFixture,
  daysFromNow,
  insertLocation,
  placeAsset,
  unique,
} from './helpers.js';

const BASE = '/api/v1/assets';

describe('GET and DELETE /api/v1/assets/{asset_id}', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  beforeAll(async () => {
    f = await assetsFixture();
    api = f.api;
  });
  afterAll(() => f.t.close());

  it('GET returns data: <Asset>, equal to what the create returned', async () => {
    const a = await api.create({ tags: [{ tag_type: 'rfid', value: unique('R') }], metadata: { k: [1] } });
    const res = await api.get(`${BASE}/${a.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: a });
  });

  it('GET skips the temporal-validity filter: a future-dated and an expired asset are found by id', async () => {
    const future = await api.create({ valid_from: daysFromNow(30) });
    const expired = await api.create({ valid_from: daysFromNow(-30), valid_to: daysFromNow(-1) });
    for (const a of [future, expired]) {
      const res = await api.get(`${BASE}/${a.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual(a);
    }
  });

  it('GET of an id that does not exist is 404', async () => {
    expectErrorEnvelope(await api.get(`${BASE}/2147483647`), { status: 404, type: 'not_found' });
  });

  it('GET shows the scan-derived location: location_id and location_external_key', async () => {
    const a = await api.create();
    const key = unique('DOCK');
    const locationId = await insertLocation(f.t, f.org.id, key);
    await placeAsset(f.t, a.id, locationId);
    const { data } = (await api.get(`${BASE}/${a.id}`)).json();
    expect(data).toMatchObject({ location_id: locationId, location_external_key: key });
  });

  it('DELETE answers 204 with an empty body; a second DELETE is 404', async () => {
    const a = await api.create();
    const first = await api.delete(`${BASE}/${a.id}`);
    expect(first.statusCode).toBe(204);
    expect(first.body).toBe('');
    expectErrorEnvelope(await api.delete(`${BASE}/${a.id}`), { status: 404, type: 'not_found' });
  });

  it('DELETE of an id that does not exist is 404', async () => {
    expectErrorEnvelope(await api.delete(`${BASE}/2147483647`), { status: 404, type: 'not_found' });
  });

  it('a soft-deleted asset is 404 on GET, PATCH and rename', async () => {
    const a = await api.create();
    await api.delete(`${BASE}/${a.id}`);
    expectErrorEnvelope(await api.get(`${BASE}/${a.id}`), { status: 404, type: 'not_found' });
    expectErrorEnvelope(await api.patch(`${BASE}/${a.id}`, { name: 'x' }), { status: 404 });
    expectErrorEnvelope(await api.post(`${BASE}/${a.id}/rename`, { external_key: unique('R') }), {
      status: 404,
    });
  });

  it('a deleted asset is listed only with include_deleted=true, with deleted_at set and tags []', async () => {
    const key = unique('GONE');
    const a = await api.create({ external_key: key, tags: [{ tag_type: 'ble', value: unique('B') }] });
    const before = Date.now();
    await api.delete(`${BASE}/${a.id}`);
    expect((await api.list(`?external_key=${key}`)).total_count).toBe(0);
    const { data, total_count } = await api.list(`?external_key=${key}&include_deleted=true`);
    expect(total_count).toBe(1);
    expect(data[0]).toMatchObject({ id: a.id, tags: [] });
    expect(Date.parse(data[0]!.deleted_at!)).toBeGreaterThanOrEqual(before - 1000);
    expect(data[0]!.updated_at).toBe(data[0]!.deleted_at);
  });

  it('DELETE releases the tags: they can be attached elsewhere at once, and q no longer finds the asset by them', async () => {
    const value = unique('TAGGED');
    const a = await api.create({ tags: [{ tag_type: 'rfid', value }] });
    await api.delete(`${BASE}/${a.id}`);
    expect((await api.list(`?q=${value}&include_deleted=true`)).total_count).toBe(0);
    const b = await api.create({ tags: [{ tag_type: 'rfid', value }] });
    expect(b.tags).toEqual([{ id: expect.any(Number), tag_type: 'rfid', value }]);
    const other = await api.create();
    const attach = await api.post(`${BASE}/${other.id}/tags`, { tag_type: 'rfid', value: `${value}-2` });
    expect(attach.statusCode).toBe(201);
  });

  it('a tag attach that sends the tag record id is read_only: the id is on the Tag read shape, the server assigns it', async () => {
    const a = await api.create();
    for (const [id, code] of [
      [5, 'read_only'],
      [2147483648, 'too_large'],
    ] as const) {
      const res = await api.post(`${BASE}/${a.id}/tags`, { tag_type: 'rfid', value: unique('ID'), id });
      expect(expectValidationError(res).map((f) => [f.field, f.code])).toEqual([['id', code]]);
    }
  });

  it('DELETE frees the external_key at once; the deleted row keeps it', async () => {
    const key = unique('FREE');
    const a = await api.create({ external_key: key });
    await api.delete(`${BASE}/${a.id}`);
    const b = await api.create({ external_key: key });
    const { data } = await api.list(`?external_key=${key}&include_deleted=true`);
    expect(data.map((x) => [x.id, x.deleted_at === null])).toEqual([
      [a.id, false],
      [b.id, true],
    ]);
  });

  it('tags of a deleted asset cannot be changed: attach and detach are 404', async () => {
    const a = await api.create({ tags: [{ tag_type: 'barcode', value: unique('BC') }] });
    await api.delete(`${BASE}/${a.id}`);
    expectErrorEnvelope(await api.post(`${BASE}/${a.id}/tags`, { tag_type: 'rfid', value: unique('X') }), {
      status: 404,
    });
    expectErrorEnvelope(await api.delete(`${BASE}/${a.id}/tags/${a.tags[0]!.id}`), { status: 404 });
  });
});
