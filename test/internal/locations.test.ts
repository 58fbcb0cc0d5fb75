import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertAsset,
} from './helpers.js';

/**
 * The web app's location writes: the public API's service behind the session, so the
 * same bodies, rules and messages. Each error case is compared with what the public API
 * answers for the same request.
 */
describe('/internal/ location writes', () => {
  let t: InternalTestApp;
  let me: Browser;
  let key: string;

  const patch = (id: number, body: unknown) =>
    me.request({
      method: 'PATCH',
      url: `/internal/locations/${id}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify(body),
    });

  /** The same call on the public API, with a read+write key of the same organization. */
  const publicCall = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined
          ? {}
          : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  const create = async (body: Record<string, unknown>) => {
    const res = await me.post('/internal/locations', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; external_key: string; parent_id: number | null };
  };

  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    const minted = await me.post('/internal/keys', {
      name: 'compare',
      scopes: ['locations:read', 'locations:write'],
      expires_at: null,
    });
    key = minted.json().token;
  });
  afterAll(() => t.close());

  it('creates at the root and under a parent, with tags; the details show path and descendants', async () => {
    const site = await create({ name: 'Site', external_key: 'SITE' });
    expect(site.parent_id).toBeNull();
    const hall = await create({
      name: 'Hall',
      parent_id: site.id,
      tags: [{ tag_type: 'rfid', value: 'E2001' }],
    });
    expect(hall.external_key).toMatch(/^LOC-\d+$/);
    const bay = await create({ name: 'Bay', external_key: 'BAY', parent_external_key: hall.external_key });
    expect(bay.parent_id).toBe(hall.id);

    const details = (await me.get(`/internal/locations/${site.id}`)).json();
    expect(details).toMatchObject({ data: { id: site.id, name: 'Site' }, descendant_count: 2, path: [] });
    const deep = (await me.get(`/internal/locations/${bay.id}`)).json();
    expect(deep.path.map((p: { name: string }) => p.name)).toEqual(['Site', 'Hall']);
    expect((await me.get(`/internal/locations/${hall.id}`)).json().data.tags).toEqual([
      expect.objectContaining({ tag_type: 'rfid', value: 'E2001' }),
    ]);
  });

  it('edits name, description, active flag and validity window; refuses a window that ends first', async () => {
    const loc = await create({ name: 'Dock', external_key: 'DOCK' });
    const res = await patch(loc.id, {
      name: 'Dock 1',
      description: 'north side',
      is_active: false,
      valid_from: '2025-01-01T00:00:00Z',
      valid_to: '2030-01-01T00:00:00Z',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      name: 'Dock 1',
      description: 'north side',
      is_active: false,
      valid_from: '2025-01-01T00:00:00.000Z',
      valid_to: '2030-01-01T00:00:00.000Z',
    });
    const cleared = await patch(loc.id, { description: null, valid_to: null, is_active: true });
    expect(cleared.json().data).toMatchObject({ description: null, valid_to: null, is_active: true });

    const bad = { valid_to: '2024-01-01T00:00:00Z' };
    const error = expectInternalError(await patch(loc.id, bad), { status: 400, type: 'validation_error' });
    expect(error.fields).toEqual([expect.objectContaining({ field: 'valid_to', code: 'invalid_value' })]);
    const viaApi = await publicCall('PATCH', `/api/v1/locations/${loc.id}`, bad);
    expect(viaApi.json().error.fields).toEqual(error.fields);
    expect(viaApi.json().error.detail).toBe(error.detail);

    const blank = expectInternalError(await patch(loc.id, { name: '' }), { status: 400 });
    expect(blank.fields?.[0]).toMatchObject({ field: 'name' });
    // PATCH needs the merge-patch type, as on the API.
    const plainJson = await me.request({
      method: 'PATCH',
      url: `/internal/locations/${loc.id}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expectInternalError(plainJson, { status: 415 });
  });

  it('renames a key, reporting the live descendants; a taken key is 409 with the API message', async () => {
    const top = await create({ name: 'Top', external_key: 'TOP' });
    const mid = await create({ name: 'Mid', parent_id: top.id });
    await create({ name: 'Leaf', parent_id: mid.id });
    expect((await me.get(`/internal/locations/${top.id}`)).json().descendant_count).toBe(2);
    const renamed = await me.post(`/internal/locations/${top.id}/rename`, { external_key: 'TOP-2' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ data: { external_key: 'TOP-2' }, descendant_count_affected: 2 });

    const taken = await me.post(`/internal/locations/${mid.id}/rename`, { external_key: 'TOP-2' });
    const error = expectInternalError(taken, { status: 409, type: 'conflict' });
    const viaApi = await publicCall('POST', `/api/v1/locations/${mid.id}/rename`, { external_key: 'TOP-2' });
    expect(viaApi.json().error.detail).toBe(error.detail);
    const badKey = await me.post(`/internal/locations/${mid.id}/rename`, { external_key: 'has space' });
    expect(expectInternalError(badKey, { status: 400 }).fields?.[0]).toMatchObject({
      field: 'external_key',
      code: 'invalid_value',
    });
  });

  it('moves under another parent and to the root; a cycle is 409 with the API explanation', async () => {
    const a = await create({ name: 'A', external_key: 'MOVE-A' });
    const b = await create({ name: 'B', external_key: 'MOVE-B', parent_id: a.id });
    const c = await create({ name: 'C', external_key: 'MOVE-C' });
    const moved = await patch(c.id, { parent_id: b.id });
    expect(moved.json().data).toMatchObject({ parent_id: b.id, parent_external_key: 'MOVE-B' });

    const cycle = expectInternalError(await patch(a.id, { parent_id: c.id }), {
      status: 409,
      type: 'conflict',
    });
    expect(cycle.detail).toMatch(/MOVE-A/);
    const viaApi = await publicCall('PATCH', `/api/v1/locations/${a.id}`, { parent_id: c.id });
    expect(viaApi.json().error.detail).toBe(cycle.detail);

    const root = await patch(c.id, { parent_id: null });
    expect(root.json().data.parent_id).toBeNull();
    const missing = expectInternalError(await patch(c.id, { parent_id: 999999 }), { status: 400 });
    expect(missing.fields).toEqual([expect.objectContaining({ field: 'parent_id', code: 'fk_not_found' })]);
  });

  it('deletes a leaf; a location with sub-locations or assets is 409 and says why', async () => {
    const parent = await create({ name: 'P', external_key: 'DEL-P' });
    const child = await create({ name: 'Ch', external_key: 'DEL-C', parent_id: parent.id });
    const withChildren = expectInternalError(await me.del(`/internal/locations/${parent.id}`), {
      status: 409,
    });
    expect(withChildren.detail).toBe(
      'location DEL-P has 1 child location(s); move or delete them first (no cascade)',
    );
    const asset = await insertAsset(t, me.orgId, { external_key: 'DEL-ASSET', name: 'Crate' });
    await t.database.db.pool.query(
      'INSERT INTO asset_positions (org_id, asset_id, location_id) VALUES ($1, $2, $3)',
      [me.orgId, asset, child.id],
    );
    const withAssets = expectInternalError(await me.del(`/internal/locations/${child.id}`), { status: 409 });
    expect(withAssets.detail).toMatch(/DEL-C has 1 asset\(s\) placed at it/);
    const here = (await me.get(`/internal/locations/${child.id}/assets`)).json();
    expect(here).toMatchObject({
      total_count: 1,
      data: [{ id: asset, external_key: 'DEL-ASSET', name: 'Crate' }],
    });

    await t.database.db.pool.query('DELETE FROM asset_positions WHERE asset_id = $1', [asset]);
    expect((await me.del(`/internal/locations/${child.id}`)).statusCode).toBe(204);
    expectInternalError(await me.del(`/internal/locations/${child.id}`), { status: 404, type: 'not_found' });
    expectInternalError(await me.get(`/internal/locations/${child.id}`), { status: 404 });
  });

  it('attaches and detaches tags; a tag in use elsewhere is 409 naming its holder', async () => {
    const one = await create({ name: 'One', external_key: 'TAG-1' });
    const two = await create({ name: 'Two', external_key: 'TAG-2' });
    const attached = await me.post(`/internal/locations/${one.id}/tags`, { tag_type: 'rfid', value: 'AA01' });
    expect(attached.statusCode, attached.body).toBe(201);
    const tag = attached.json().data;
    expect(tag).toMatchObject({ tag_type: 'rfid', value: 'AA01' });

    const dup = await me.post(`/internal/locations/${two.id}/tags`, { tag_type: 'rfid', value: 'AA01' });
    const error = expectInternalError(dup, { status: 409, type: 'conflict' });
    expect(error.detail).toBe(`tag rfid:AA01 is already attached to location ${one.id}`);
    const badType = await me.post(`/internal/locations/${two.id}/tags`, { tag_type: 'laser', value: 'x' });
    expect(expectInternalError(badType, { status: 400 }).fields?.[0]).toMatchObject({ field: 'tag_type' });

    expect((await me.del(`/internal/locations/${two.id}/tags/${tag.id}`)).statusCode).toBe(404);
    expect((await me.del(`/internal/locations/${one.id}/tags/${tag.id}`)).statusCode).toBe(204);
    expectInternalError(await me.del(`/internal/locations/${one.id}/tags/${tag.id}`), { status: 404 });
    expect((await me.get(`/internal/locations/${one.id}`)).json().data.tags).toEqual([]);
  });

  it('searches the tree by name or key at any depth, with each hit’s path', async () => {
    const root = await create({ name: 'Warehouse North', external_key: 'WH-N' });
    const aisle = await create({ name: 'Aisle 7', external_key: 'WH-N-A7', parent_id: root.id });
    await create({ name: 'Shelf zebra', external_key: 'SHELF-Z', parent_id: aisle.id });
    const byName = (await me.get('/internal/locations/tree/search?q=ZEBRA')).json();
    expect(byName.data).toEqual([
      expect.objectContaining({ name: 'Shelf zebra', path: ['Warehouse North', 'Aisle 7'], child_count: 0 }),
    ]);
    const byKey = (await me.get('/internal/locations/tree/search?q=wh-n')).json();
    expect(byKey.data.map((n: { name: string }) => n.name)).toEqual(['Aisle 7', 'Warehouse North']);
    expect(byKey.data[1]).toMatchObject({ path: [], child_count: 1 });
    // The description is not a name or a key.
    await patch(root.id, { description: 'quokka' });
    expect((await me.get('/internal/locations/tree/search?q=quokka')).json().total_count).toBe(0);
    expectInternalError(await me.get('/internal/locations/tree/search'), { status: 400 });
  });

  it('searches the tree case-insensitively beyond ASCII, a Greek sigma in either form', async () => {
    await create({ name: 'Ünïcode Hall', external_key: 'UNI-HALL' });
    await create({ name: 'ΟΔΟΣ ΑΘΗΝΑΣ', external_key: 'GR-ROAD' });
    const names = async (q: string) =>
      (await me.get(`/internal/locations/tree/search?q=${encodeURIComponent(q)}`))
        .json()
        .data.map((n: { name: string }) => n.name);
    expect(await names('üNÏ')).toEqual(['Ünïcode Hall']);
    expect(await names('Σ')).toEqual(['ΟΔΟΣ ΑΘΗΝΑΣ']);
    expect(await names('οσ α')).toEqual(['ΟΔΟΣ ΑΘΗΝΑΣ']);
    expect(await names('δοσ')).toEqual(['ΟΔΟΣ ΑΘΗΝΑΣ']);
    expect(await names('ΟΔΑ')).toEqual([]);
  });
});

describe('the tree at 10,000 locations loads a level and a page at a time', () => {
  let t: InternalTestApp;
  let me: Browser;
  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    // 100 roots with 99 children each: 10,000 live locations.
    await t.database.db.pool.query(
      `INSERT INTO locations (org_id, external_key, name)
       SELECT $1, 'R-' || lpad(r::text, 3, '0'), 'Root ' || lpad(r::text, 3, '0') FROM generate_series(1, 100) r`,
      [me.orgId],
    );
    await t.database.db.pool.query(
      `INSERT INTO locations (org_id, external_key, name, parent_id)
       SELECT $1, p.external_key || '-' || lpad(c::text, 2, '0'), 'Room ' || lpad(c::text, 2, '0'), p.id
       FROM locations p CROSS JOIN generate_series(1, 99) c WHERE p.org_id = $1`,
      [me.orgId],
    );
  });
  afterAll(() => t.close());

  it('answers one page of one level, with child counts for expanding', async () => {
    const roots = (await me.get('/internal/locations/tree?limit=50')).json();
    expect(roots.total_count).toBe(100);
    expect(roots.data).toHaveLength(50);
    expect(roots.data[0]).toMatchObject({ name: 'Root 001', child_count: 99, asset_count: 0 });
    const next = (await me.get('/internal/locations/tree?limit=50&offset=50')).json();
    expect(next.data[0].name).toBe('Root 051');

    const children = (await me.get(`/internal/locations/tree?parent_id=${roots.data[1].id}&limit=20`)).json();
    expect(children.total_count).toBe(99);
    expect(children.data).toHaveLength(20);
    expect(children.data[0]).toMatchObject({ external_key: 'R-002-01', child_count: 0 });

    const search = (await me.get('/internal/locations/tree/search?q=r-042-&limit=10')).json();
    expect(search.total_count).toBe(99);
    expect(search.data).toHaveLength(10);
    expect(search.data[0]).toMatchObject({ external_key: 'R-042-01', path: ['Root 042'] });
    const details = (await me.get(`/internal/locations/${roots.data[0].id}`)).json();
    expect(details.descendant_count).toBe(99);
  });
});
