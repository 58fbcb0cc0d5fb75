/**
 * GET /api/v1/assets: sort (each field, byte order of names, several keys), q (which fields,
 * literal wildcards, combined with filters, tags only while attached) and total_count across
 * pages, on the catalogue of list-fixture.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { type AssetApi, type AssetsFixture, assetApi, insertLocation, placeAsset } from './helpers.js';
import { BASE, type Catalogue, catalogue, ids } from './list-fixture.js';

const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('GET /api/v1/assets: sort, q and total_count', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  let a: Record<string, Asset>;
  let dockA: number;
  let visible: Catalogue['visible'];

  beforeAll(async () => {
    ({ f, api, a, dockA, visible } = await catalogue());
  });
  afterAll(() => f.t.close());

  it('sort: each field in both directions, ties broken by id in the direction of the last key', async () => {
    const compare: Record<string, (x: Asset, y: Asset) => number> = {
      external_key: (x, y) => bytes(x.external_key, y.external_key),
      name: (x, y) => bytes(x.name, y.name),
      created_at: (x, y) => Date.parse(x.created_at) - Date.parse(y.created_at),
      updated_at: (x, y) => Date.parse(x.updated_at) - Date.parse(y.updated_at),
    };
    for (const [field, cmp] of Object.entries(compare)) {
      const asc = [...visible()].sort((x, y) => cmp(x, y) || x.id - y.id);
      expect(ids((await api.list(`?sort=${field}`)).data), field).toEqual(ids(asc));
      expect(ids((await api.list(`?sort=-${field}`)).data), `-${field}`).toEqual(ids(asc).reverse());
    }
  });

  it('sort: names order by byte value (Z < a < z < Ä < é) and equal names by id', async () => {
    const names = (await api.list('?sort=name')).data.map((x) => x.name);
    expect(names).toEqual([
      '100% cotton_bag',
      'Alpha',
      'Alpha',
      'Zebra',
      'alpha',
      'beta',
      'Ärger im Lager',
      'émile',
    ]);
    const alphas = (await api.list('?sort=name&q=alpha')).data;
    expect(ids(alphas)).toEqual([a.alphaLower!.id, a.alphaD!.id, a.alphaC!.id]);
  });

  it('sort: several keys apply in order, then id', async () => {
    const rows = (await api.list('?sort=name,-external_key')).data;
    const expected = [...visible()].sort(
      (x, y) => bytes(x.name, y.name) || -bytes(x.external_key, y.external_key) || y.id - x.id,
    );
    expect(ids(rows)).toEqual(ids(expected));
  });

  it('q: a case-insensitive substring of name, external_key, description or an attached tag value', async () => {
    expect(ids((await api.list('?q=ALPHA')).data)).toEqual([a.alphaC!.id, a.alphaD!.id, a.alphaLower!.id]);
    expect(ids((await api.list('?q=b-2')).data)).toEqual([a.beta!.id]);
    expect(ids((await api.list('?q=SHELF')).data)).toEqual([a.beta!.id]);
    expect(ids((await api.list('?q=tag-x')).data)).toEqual([a.beta!.id]);
    expect(ids((await api.list('?q=%C3%A4RGER')).data)).toEqual([a.umlaut!.id]);
    expect(ids((await api.list('?q=%C3%89MILE')).data)).toEqual([a.accent!.id]);
  });

  it('q: each asset on a page reads as it does alone: its current location, the location key and its tags', async () => {
    // A text search's page reads the locations after the page (repository-list.ts).
    for (const asset of visible()) {
      expect((await api.list(`?q=${encodeURIComponent(asset.external_key)}`)).data).toEqual([asset]);
    }
    const full = await api.list('?q=alpha&limit=2');
    expect(full.data).toEqual([a.alphaC, a.alphaD]);
    expect(full.data[1]!.location_id).toBe(dockA);
    expect(full.total_count).toBe(3);
    expect((await api.list('?q=alpha&offset=2')).data).toEqual([a.alphaLower]);
  });

  it('q and the default list: a page row carries its live tags in id order and its current location, as GET /assets/{id} shows them', async () => {
    const org = await f.t.createOrg();
    const own = assetApi(f.t, (await org.key()).token);
    const dock = await insertLocation(f.t, org.id, 'SEARCH-DOCK');
    const tagged = await own.create({
      name: 'Searched pallet',
      tags: [
        { tag_type: 'rfid', value: 'ZZ-FIRST' },
        { tag_type: 'barcode', value: 'AA-SECOND' },
      ],
    });
    const plain = await own.create({ name: 'Searched crate' });
    await placeAsset(f.t, tagged.id, dock);
    expect((await own.delete(`${BASE}/${tagged.id}/tags/${tagged.tags[1]!.id}`)).statusCode).toBe(204);
    expect(
      (await own.post(`${BASE}/${tagged.id}/tags`, { tag_type: 'ble', value: 'MM-THIRD' })).statusCode,
    ).toBe(201);
    const alone = async (id: number) => (await own.get(`${BASE}/${id}`)).json().data as Asset;
    const [taggedNow, plainNow] = [await alone(tagged.id), await alone(plain.id)];
    // By id: not by type (ble < rfid) nor by value (MM < ZZ); the detached tag is gone.
    expect(taggedNow.tags.map((tag) => tag.value)).toEqual(['ZZ-FIRST', 'MM-THIRD']);
    expect(taggedNow.location_id).toBe(dock);
    expect((await own.list('?q=searched')).data).toEqual(
      [plainNow, taggedNow].sort((x, y) => bytes(x.external_key, y.external_key)),
    );
    expect((await own.list('?q=searched&sort=-name')).data).toEqual([taggedNow, plainNow]);
    expect((await own.list('?q=mm-third')).data).toEqual([taggedNow]);
    // The default list's page is one statement of its own (buildListPageSql).
    expect((await own.list('')).data).toEqual(
      [plainNow, taggedNow].sort((x, y) => bytes(x.external_key, y.external_key)),
    );
    expect((await own.list('?sort=-name&limit=1')).data).toEqual([taggedNow]);
    expect((await own.list(`?location_id=${dock}`)).data).toEqual([taggedNow]);
  });

  it('q: metadata is not searched, and a match cannot span two fields', async () => {
    expect((await api.list('?q=hiddenword')).total_count).toBe(0);
    expect((await api.list('?q=betasecond')).total_count).toBe(0);
    expect((await api.list('?q=B-200beta')).total_count).toBe(0);
  });

  it('q: % and _ are literal characters, not wildcards', async () => {
    expect(ids((await api.list('?q=%25')).data)).toEqual([a.percent!.id]);
    expect(ids((await api.list('?q=_')).data)).toEqual([a.percent!.id]);
    expect((await api.list('?q=100%25%25')).total_count).toBe(0);
    expect((await api.list('?q=%5C')).total_count).toBe(0);
  });

  it('q: empty is no filter; only the first value is honoured when repeated; it combines with the other filters', async () => {
    expect((await api.list('?q=')).total_count).toBe(visible().length);
    expect(ids((await api.list('?q=zebra&q=alpha')).data)).toEqual([a.zebra!.id]);
    expect(ids((await api.list('?q=alpha&is_active=true')).data)).toEqual([a.alphaC!.id, a.alphaD!.id]);
    expect(ids((await api.list(`?q=alpha&location_id=${dockA}`)).data)).toEqual([a.alphaD!.id]);
    expect((await api.list('?q=deleted')).total_count).toBe(0);
    expect((await api.list('?q=deleted&include_deleted=true')).total_count).toBe(2);
  });

  it('q: tag values match only while attached', async () => {
    const org = await f.t.createOrg();
    const own = assetApi(f.t, (await org.key()).token);
    const asset = await own.create({ tags: [{ tag_type: 'barcode', value: 'SCAN-ME-42' }] });
    expect(ids((await own.list('?q=scan-me')).data)).toEqual([asset.id]);
    expect((await own.delete(`${BASE}/${asset.id}/tags/${asset.tags[0]!.id}`)).statusCode).toBe(204);
    expect((await own.list('?q=scan-me')).total_count).toBe(0);
    const attached = await own.post(`${BASE}/${asset.id}/tags`, { tag_type: 'ble', value: 'BEACON-7' });
    expect(attached.statusCode).toBe(201);
    expect(ids((await own.list('?q=beacon')).data)).toEqual([asset.id]);
  });

  it('total_count counts the filtered set across pages, whatever the page size', async () => {
    for (const limit of [1, 2, 5, 50]) {
      const page = await api.list(`?q=a&limit=${limit}`);
      const all = await api.list('?q=a&limit=200');
      expect(page.total_count).toBe(all.data.length);
      expect(page.data).toEqual(all.data.slice(0, limit));
    }
  });
});
