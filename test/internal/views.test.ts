import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertAsset,
  insertLocation,
} from './helpers.js';

describe('handheld submissions and the views', () => {
  let t: InternalTestApp;
  let me: Browser;
  let site: number;
  let hall: number;
  let bay: number;
  let yard: number;
  let drill: number;
  let saw: number;
  let ladder: number;
  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    site = await insertLocation(t, me.orgId, { external_key: 'SITE', name: 'Site' });
    hall = await insertLocation(t, me.orgId, { external_key: 'HALL', name: 'Hall', parent_id: site });
    bay = await insertLocation(t, me.orgId, { external_key: 'BAY-1', name: 'Bay one', parent_id: hall });
    yard = await insertLocation(t, me.orgId, {
      external_key: 'YARD',
      name: 'Yard',
      description: 'outdoor storage',
    });
    await t.database.db.pool.query(
      `INSERT INTO tags (org_id, tag_type, value, location_id) VALUES ($1, 'rfid', 'LOC-TAG-77', $2)`,
      [me.orgId, yard],
    );
    drill = await insertAsset(t, me.orgId, { external_key: 'DRILL-1', name: 'Drill', tag: '3000ABCD' });
    saw = await insertAsset(t, me.orgId, { external_key: 'SAW-1', name: 'Saw' });
    ladder = await insertAsset(t, me.orgId, { external_key: 'LADDER-1', name: 'Ladder' });
  });
  afterAll(() => t.close());

  it('a handheld submission moves assets named by id, external key or tag', async () => {
    const res = await me.post('/internal/handheld', {
      location: { external_key: 'BAY-1' },
      items: [
        { asset_id: drill },
        { asset_external_key: 'SAW-1' },
        { tag: 'NO-SUCH-TAG' },
        { asset_external_key: 'NO-SUCH-KEY' },
        { asset_id: 999999 },
      ],
      observed_at: '2025-03-01T10:00:00Z',
    });
    expect(res.statusCode, res.body).toBe(200);
    // The unknown ones are named as scanned, so the person can find them.
    expect(res.json()).toEqual({
      data: { applied: 2, unknown: 3, errors: [], unknown_items: ['NO-SUCH-TAG', 'NO-SUCH-KEY', '999999'] },
    });
    const report = await t.services.tracking.report(me.orgId, { limit: 50, offset: 0 });
    expect(report.data.map((r) => [r.asset_id, r.location_id]).sort()).toEqual(
      [
        [drill, bay],
        [saw, bay],
      ].sort(),
    );

    // observed_at defaults to now; the location may be named by its tag.
    const before = Date.now();
    const now = await me.post('/internal/handheld', {
      location: { tag: 'loc-tag-77' },
      items: [{ tag: '3000abcd' }],
    });
    expect(now.json().data).toEqual({ applied: 1, unknown: 0, errors: [], unknown_items: [] });
    const { rows } = await t.database.db.pool.query(
      'SELECT location_id, last_seen_at FROM asset_positions WHERE asset_id = $1',
      [drill],
    );
    expect(rows[0].location_id).toBe(yard);
    expect(rows[0].last_seen_at.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('refuses a location that is not there, and reports refused items', async () => {
    const missing = await me.post('/internal/handheld', {
      location: { external_key: 'NOPE' },
      items: [{ asset_id: saw }],
    });
    expect(expectInternalError(missing, { status: 400, type: 'validation_error' }).fields).toEqual([
      expect.objectContaining({ field: 'location', code: 'fk_not_found' }),
    ]);
    const two = await me.post('/internal/handheld', {
      location: { id: bay, external_key: 'BAY-1' },
      items: [{ asset_id: saw }],
    });
    expectInternalError(two, { status: 400, type: 'validation_error' });
    const empty = await me.post('/internal/handheld', { location: { id: bay }, items: [] });
    expectInternalError(empty, { status: 400, type: 'validation_error' });
    const mixed = await me.post('/internal/handheld', {
      location: { id: bay },
      items: [{}, { asset_id: ladder, tag: 'X' }, { asset_id: ladder }],
    });
    expect(mixed.statusCode, mixed.body).toBe(200);
    expect(mixed.json().data).toEqual({
      applied: 1,
      unknown: 0,
      errors: [expect.stringMatching(/^item 1: /), expect.stringMatching(/^item 2: /)],
      unknown_items: [],
    });
    const badTime = await me.post('/internal/handheld', {
      location: { id: bay },
      items: [{ asset_id: ladder }],
      observed_at: 'yesterday',
    });
    expectInternalError(badTime, { status: 400, type: 'validation_error' });
  });

  it('the location tree: roots, then children, with live child and asset counts', async () => {
    const roots = await me.get('/internal/locations/tree');
    expect(roots.statusCode, roots.body).toBe(200);
    expect(roots.json()).toEqual({
      data: [
        { id: site, external_key: 'SITE', name: 'Site', child_count: 1, asset_count: 0 },
        { id: yard, external_key: 'YARD', name: 'Yard', child_count: 0, asset_count: 1 },
      ],
      limit: 50,
      offset: 0,
      total_count: 2,
    });
    const children = (await me.get(`/internal/locations/tree?parent_id=${hall}`)).json();
    expect(children.data).toEqual([
      { id: bay, external_key: 'BAY-1', name: 'Bay one', child_count: 0, asset_count: 2 },
    ]);
    // A deleted child or asset is not counted.
    const gone = await insertLocation(t, me.orgId, { external_key: 'GONE', name: 'Gone', parent_id: site });
    await t.database.db.pool.query('UPDATE locations SET deleted_at = now() WHERE id = $1', [gone]);
    expect((await me.get('/internal/locations/tree?limit=1')).json()).toMatchObject({
      data: [{ id: site, child_count: 1 }],
      total_count: 2,
    });
    expectInternalError(await me.get(`/internal/locations/tree?parent_id=${gone}`), { status: 404 });
    expectInternalError(await me.get('/internal/locations/tree?parent_id=x'), { status: 400 });
  });

  it("the locations picker searches key, name and description, and names each one's ancestors", async () => {
    const all = (await me.get('/internal/locations')).json();
    expect(all.total_count).toBe(4);
    expect(Object.keys(all.data[0]).sort()).toEqual(['external_key', 'id', 'name', 'path', 'path_ids']);
    expect((await me.get('/internal/locations?q=bay')).json().data).toEqual([
      { id: bay, external_key: 'BAY-1', name: 'Bay one', path: ['Site', 'Hall'], path_ids: [site, hall] },
    ]);
    expect((await me.get('/internal/locations?q=SITE')).json().data).toContainEqual({
      id: site,
      external_key: 'SITE',
      name: 'Site',
      path: [],
      path_ids: [],
    });
    expect(
      (await me.get('/internal/locations?q=OUTDOOR')).json().data.map((l: { id: number }) => l.id),
    ).toEqual([yard]);
    expect((await me.get('/internal/locations?q=%25')).json().total_count).toBe(0);
  });

  it('assets with where they are now and when they were last seen', async () => {
    const res = await me.get('/internal/assets');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.total_count).toBe(3);
    const byKey = Object.fromEntries(body.data.map((r: { external_key: string }) => [r.external_key, r]));
    expect(byKey['SAW-1']).toEqual({
      id: saw,
      external_key: 'SAW-1',
      name: 'Saw',
      location_id: bay,
      location_external_key: 'BAY-1',
      location_name: 'Bay one',
      last_seen_at: '2025-03-01T10:00:00.000Z',
    });
    const never = await insertAsset(t, me.orgId, { external_key: 'NEW-1', name: 'Unseen thing' });
    const unseen = (await me.get('/internal/assets?q=unseen')).json();
    expect(unseen.data).toEqual([
      {
        id: never,
        external_key: 'NEW-1',
        name: 'Unseen thing',
        location_id: null,
        location_external_key: null,
        location_name: null,
        last_seen_at: null,
      },
    ]);
  });

  it("an asset's history (the public API's rows, with names and the current stay marked) and the report", async () => {
    const history = await me.get(`/internal/assets/${drill}/history`);
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json()).toMatchObject({ limit: 50, offset: 0, total_count: 2 });
    expect(history.json().data[0]).toEqual({
      event_observed_at: expect.any(String),
      location_id: yard,
      location_external_key: 'YARD',
      location_name: expect.any(String),
      duration_seconds: expect.any(Number),
      current: true,
    });
    expect(history.json().data[1]).toMatchObject({
      location_id: bay,
      event_observed_at: '2025-03-01T10:00:00.000Z',
      current: false,
    });
    expectInternalError(await me.get('/internal/assets/2147483000/history'), {
      status: 404,
      type: 'not_found',
    });

    const report = (await me.get('/internal/report?q=saw')).json();
    expect(report).toMatchObject({ total_count: 1, limit: 50, offset: 0 });
    expect(report.data).toEqual([
      {
        asset_id: saw,
        asset_external_key: 'SAW-1',
        asset_name: 'Saw',
        asset_last_seen: '2025-03-01T10:00:00.000Z',
        asset_deleted_at: null,
        location_id: bay,
        location_external_key: 'BAY-1',
        location_name: 'Bay one',
      },
    ]);
  });
});
