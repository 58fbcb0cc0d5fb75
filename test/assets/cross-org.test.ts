/**
 * Organizations never see each other's assets: another organization's ids are 404 on
 * every asset endpoint, and lists, filters and q never show its rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetApi,
  assetsFixture,
  insertLocation,
  placeAsset,
  unique,
} from './helpers.js';

const BASE = '/api/v1/assets';

describe('assets across organizations', () => {
  let f: AssetsFixture;
  let mine: AssetApi;
  let theirs: AssetApi;
  let foreign: Asset;
  let foreignTag: number;
  let foreignLocation: number;
  const marker = unique('SHARED');

  beforeAll(async () => {
    f = await assetsFixture();
    mine = f.api;
    const other = await f.t.createOrg('Other');
    theirs = assetApi(f.t, (await other.key()).token);
    foreign = await theirs.create({
      name: `Theirs ${marker}`,
      external_key: marker,
      tags: [{ tag_type: 'rfid', value: `${marker}-TAG` }],
    });
    foreignTag = foreign.tags[0]!.id;
    foreignLocation = await insertLocation(f.t, other.id, `${marker}-LOC`);
    await placeAsset(f.t, foreign.id, foreignLocation);
    foreign = (await theirs.get(`${BASE}/${foreign.id}`)).json().data;
  });
  afterAll(() => f.t.close());

  it.each([
    ['GET', () => mine.get(`${BASE}/${foreign.id}`)],
    ['PATCH', () => mine.patch(`${BASE}/${foreign.id}`, { name: 'stolen' })],
    ['DELETE', () => mine.delete(`${BASE}/${foreign.id}`)],
    ['rename', () => mine.post(`${BASE}/${foreign.id}/rename`, { external_key: unique('X') })],
    ['tag attach', () => mine.post(`${BASE}/${foreign.id}/tags`, { tag_type: 'ble', value: unique('B') })],
    ['tag detach', () => mine.delete(`${BASE}/${foreign.id}/tags/${foreignTag}`)],
  ])("another organization's asset id is 404 on %s", async (_name, call) => {
    expectErrorEnvelope(await call(), { status: 404, type: 'not_found' });
  });

  it('and nothing of it changed', async () => {
    expect((await theirs.get(`${BASE}/${foreign.id}`)).json().data).toEqual(foreign);
  });

  it.each([
    [''],
    ['?include_deleted=true'],
    [`?external_key=${marker}`],
    [`?q=${marker}`],
    [`?q=${marker}-TAG`],
    [`?location_external_key=${marker}-LOC`],
    ['?is_active=true&sort=-created_at&limit=200'],
  ])('lists never show it (%s)', async (query) => {
    expect((await mine.list(query)).data.map((a) => a.id)).not.toContain(foreign.id);
  });

  it('lists never show it by its location_id either', async () => {
    expect(foreign.location_id).toBe(foreignLocation);
    expect((await mine.list(`?location_id=${foreignLocation}`)).total_count).toBe(0);
  });

  it('external_keys and auto-key slots are per organization', async () => {
    const own = await mine.create({ external_key: marker });
    expect(own.id).not.toBe(foreign.id);
    const org = await f.t.createOrg();
    const fresh = assetApi(f.t, (await org.key()).token);
    const org2 = await f.t.createOrg();
    const fresh2 = assetApi(f.t, (await org2.key()).token);
    expect((await fresh.create()).external_key).toBe('ASSET-0001');
    expect((await fresh2.create()).external_key).toBe('ASSET-0001');
  });

  it('a tag attached in one organization may be attached in another', async () => {
    const a = await mine.create({ tags: [{ tag_type: 'rfid', value: `${marker}-TAG` }] });
    expect(a.tags).toHaveLength(1);
  });
});
