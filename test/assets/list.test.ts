/**
 * GET /api/v1/assets: the list envelope, the liveness axes, the filters, and the rules shared
 * by list endpoints 1-7. Sort, q and total_count: list-sort-search.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetApi,
  daysFromNow,
  fieldCodes,
  insertLocation,
  placeAsset,
} from './helpers.js';
import { BASE, type Catalogue, catalogue, ids } from './list-fixture.js';

const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('GET /api/v1/assets', () => {
  let f: AssetsFixture;
  /** A key of an organization holding exactly the assets below. */
  let api: AssetApi;
  let a: Record<string, Asset>;
  let dockA: number;
  let dockB: number;
  let visible: Catalogue['visible'];

  beforeAll(async () => {
    ({ f, api, a, dockA, dockB, visible } = await catalogue());
  });
  afterAll(() => f.t.close());

  it('answers the list envelope: data, limit 50, offset 0, total_count', async () => {
    const res = await api.get(BASE);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'limit', 'offset', 'total_count']);
    expect(body).toMatchObject({ limit: 50, offset: 0, total_count: visible().length });
    expect(body.data).toHaveLength(visible().length);
  });

  it('data is [] (never null) when nothing matches', async () => {
    expect(await api.list('?external_key=NOPE')).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
  });

  it('rows are the read shape, equal to GET of each', async () => {
    const { data } = await api.list();
    for (const row of data) expect(row).toEqual((await api.get(`${BASE}/${row.id}`)).json().data);
  });

  it('default order is external_key ascending by byte value, then id', async () => {
    const expected = [...visible()].sort((x, y) => bytes(x.external_key, y.external_key) || x.id - y.id);
    expect(ids((await api.list()).data)).toEqual(ids(expected));
    expect((await api.list()).data.map((x) => x.external_key).slice(0, 3)).toEqual([
      'B-200',
      'C-300',
      'D-400',
    ]);
  });

  it('soft-delete axis: deleted assets are hidden by default and added by include_deleted=true', async () => {
    expect(ids((await api.list()).data)).not.toContain(a.deleted!.id);
    const all = await api.list('?include_deleted=true');
    expect(all.total_count).toBe(visible().length + 2);
    const deleted = all.data.filter((x) => x.deleted_at !== null);
    expect(ids(deleted).sort()).toEqual([a.deleted!.id, a.deletedInactive!.id].sort());
    expect((await api.list('?include_deleted=false')).total_count).toBe(visible().length);
  });

  it('activation axis: both values by default; is_active narrows, independently of include_deleted', async () => {
    const inactive = await api.list('?is_active=false');
    expect(ids(inactive.data)).toEqual([a.alphaLower!.id]);
    expect((await api.list('?is_active=true')).total_count).toBe(visible().length - 1);
    const inactiveAll = await api.list('?is_active=false&include_deleted=true');
    expect(ids(inactiveAll.data).sort()).toEqual([a.alphaLower!.id, a.deletedInactive!.id].sort());
  });

  it('temporal axis: future-dated and expired assets are never listed, include_deleted or not', async () => {
    for (const query of ['', '?include_deleted=true', '?is_active=true', '?q=e', '?sort=-name']) {
      const listed = ids((await api.list(query)).data);
      expect(listed).not.toContain(a.future!.id);
      expect(listed).not.toContain(a.expired!.id);
    }
  });

  it('list rule 1: a repeated filter is any-of; a comma-joined external_key is invalid_value', async () => {
    const both = await api.list('?external_key=B-200&external_key=C-300&external_key=NOPE');
    expect(ids(both.data)).toEqual([a.beta!.id, a.alphaC!.id]);
    expect(fieldCodes(await api.get(`${BASE}?external_key=B-200,C-300`))).toEqual([
      ['external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await api.get(`${BASE}?location_external_key=DOCK-A,DOCK-B`))).toEqual([
      ['location_external_key', 'invalid_value'],
    ]);
    const docks = await api.list(`?location_id=${dockA}&location_id=${dockB}`);
    expect(ids(docks.data)).toEqual([a.beta!.id, a.alphaD!.id, a.zebra!.id]);
    expect(fieldCodes(await api.get(`${BASE}?location_id=${dockA},${dockB}`))).toEqual([
      ['location_id', 'invalid_value'],
    ]);
  });

  it('list rule 2: location_id with location_external_key is ambiguous_fields, one entry per parameter, even naming one location', async () => {
    const res = await api.get(`${BASE}?location_id=${dockA}&location_external_key=DOCK-A`);
    expect(expectValidationError(res)).toEqual([
      {
        field: 'location_id',
        code: 'ambiguous_fields',
        message: expect.any(String),
        params: expect.any(Object),
      },
      {
        field: 'location_external_key',
        code: 'ambiguous_fields',
        message: expect.any(String),
        params: expect.any(Object),
      },
    ]);
  });

  it('location filters: location_id and location_external_key select the assets placed there', async () => {
    expect(ids((await api.list(`?location_id=${dockA}`)).data)).toEqual([a.beta!.id, a.alphaD!.id]);
    expect(ids((await api.list('?location_external_key=DOCK-B&location_external_key=DOCK-A')).data)).toEqual([
      a.beta!.id,
      a.alphaD!.id,
      a.zebra!.id,
    ]);
    expect((await api.list('?location_id=2147483647')).total_count).toBe(0);
    expect((await api.list('?location_external_key=NOWHERE')).total_count).toBe(0);
  });

  it('location_external_key resolves only live, currently effective locations (by id they still filter)', async () => {
    const org = await f.t.createOrg();
    const own = assetApi(f.t, (await org.key()).token);
    const expired = await insertLocation(f.t, org.id, 'OLD-DOCK', {
      validFrom: daysFromNow(-9),
      validTo: daysFromNow(-1),
    });
    const asset = await own.create();
    await placeAsset(f.t, asset.id, expired);
    expect((await own.list('?location_external_key=OLD-DOCK')).total_count).toBe(0);
    expect(ids((await own.list(`?location_id=${expired}`)).data)).toEqual([asset.id]);
  });

  it('list rule 3: external_key-typed filters reject characters outside ^[A-Za-z0-9-]+$ with invalid_value', async () => {
    for (const [param, value] of [
      ['external_key', 'A_B'],
      ['external_key', 'A%20B'],
      ['external_key', '%C3%84'],
      ['location_external_key', 'DOCK.A'],
    ]) {
      const [field] = expectValidationError(await api.get(`${BASE}?${param}=${value}`));
      expect(field).toMatchObject({ field: param, code: 'invalid_value', params: { index: 0 } });
    }
    // A repeated parameter is one parameter: the value's position is params.index (master-data.md).
    const [field] = expectValidationError(await api.get(`${BASE}?external_key=ok&external_key=a,b`));
    expect(field).toMatchObject({ field: 'external_key', code: 'invalid_value', params: { index: 1 } });
  });

  it('list rule 4: an external_key lookup applies the temporal predicate; the row is reachable only by id', async () => {
    for (const name of ['future', 'expired']) {
      const row = a[name]!;
      expect(await api.list(`?external_key=${row.external_key}`)).toMatchObject({ total_count: 0, data: [] });
      expect((await api.get(`${BASE}/${row.id}`)).statusCode).toBe(200);
    }
  });

  it('list rule 5: an unknown sort field is invalid_value with the message unknown sort field: <name>', async () => {
    for (const [sort, name] of [
      ['colour', 'colour'],
      ['-colour', 'colour'],
      ['name,id', 'id'],
      ['is_active', 'is_active'],
    ]) {
      expect(expectValidationError(await api.get(`${BASE}?sort=${sort}`))).toEqual([
        {
          field: 'sort',
          code: 'invalid_value',
          message: `unknown sort field: ${name}`,
          params: expect.any(Object),
        },
      ]);
    }
  });

  it('list rule 6: list filters sent to detail and write endpoints are invalid_context naming GET /api/v1/assets', async () => {
    const id = a.beta!.id;
    const endpoints: [string, () => Promise<import('fastify').LightMyRequestResponse>, string][] = [];
    for (const filter of [
      'include_deleted=true',
      'is_active=true',
      'external_key=B-200',
      'q=x',
      'location_id=1',
      'location_external_key=DOCK-A',
    ]) {
      endpoints.push(
        ['GET one', () => api.get(`${BASE}/${id}?${filter}`), filter],
        ['PATCH', () => api.patch(`${BASE}/${id}?${filter}`, {}), filter],
        ['DELETE', () => api.delete(`${BASE}/2147483647?${filter}`), filter],
        ['POST', () => api.post(`${BASE}?${filter}`, { name: 'never' }), filter],
        ['rename', () => api.post(`${BASE}/${id}/rename?${filter}`, { external_key: 'B-200' }), filter],
      );
    }
    for (const [label, call, filter] of endpoints) {
      const [field] = expectValidationError(await call());
      expect(field, `${label} ?${filter}`).toMatchObject({
        field: filter.split('=')[0],
        code: 'invalid_context',
      });
      expect(field!.message).toContain('GET /api/v1/assets');
    }
    expect((await api.list('?q=never')).total_count).toBe(0);
  });

  it('list rule 7: paging until offset + len(data) >= total_count visits every row once', async () => {
    const all = ids((await api.list('?include_deleted=true&sort=name')).data);
    const seen: number[] = [];
    let offset = 0;
    for (;;) {
      const page = await api.list(`?include_deleted=true&sort=name&limit=3&offset=${offset}`);
      expect(page.limit).toBe(3);
      expect(page.offset).toBe(offset);
      expect(page.total_count).toBe(all.length);
      seen.push(...ids(page.data));
      if (page.data.length === 0 || offset + page.data.length >= page.total_count) break;
      offset += page.data.length;
    }
    expect(seen).toEqual(all);
  });

  it('offset past the end gives data [] with the total_count', async () => {
    expect(await api.list('?offset=1000')).toEqual({
      data: [],
      limit: 50,
      offset: 1000,
      total_count: visible().length,
    });
    expect((await api.list('?offset=2147483647&limit=200')).total_count).toBe(visible().length);
  });

  it.each([
    ['limit=0', 'limit', 'invalid_value'],
    ['limit=201', 'limit', 'too_large'],
    ['limit=abc', 'limit', 'invalid_value'],
    ['limit=1.5', 'limit', 'invalid_value'],
    ['offset=-1', 'offset', 'invalid_value'],
    ['offset=2147483648', 'offset', 'too_large'],
    ['is_active=yes', 'is_active', 'invalid_value'],
    ['include_deleted=1', 'include_deleted', 'invalid_value'],
    ['location_id=0', 'location_id', 'invalid_value'],
    ['location_id=abc', 'location_id', 'invalid_value'],
    ['location_id=2147483648', 'location_id', 'too_large'],
    ['colour=red', 'colour', 'unknown_field'],
    ['q=a%01b', 'q', 'invalid_value'],
    ['q=line%0Abreak', 'q', 'invalid_value'],
    ['q=del%7F', 'q', 'invalid_value'],
  ])('?%s is rejected on %s (%s)', async (query, field, code) => {
    expect(fieldCodes(await api.get(`${BASE}?${query}`))).toEqual([[field, code]]);
  });

  it('limit 200 is honoured; limit above 200 names params.max 200', async () => {
    expect((await api.list('?limit=200')).limit).toBe(200);
    expect(expectValidationError(await api.get(`${BASE}?limit=201`))[0]!.params).toEqual({ max: 200 });
  });
});
