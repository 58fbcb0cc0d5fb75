import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertAsset,
  insertLocation,
} from './helpers.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the two surfaces keep their credentials apart', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp();
  });
  afterAll(() => t.close());

  it('the public API refuses the web session: as the cookie, and as a Bearer token', async () => {
    const me = await t.signUp();
    const withCookie = await t.app.inject({
      method: 'GET',
      url: '/api/v1/orgs/me',
      headers: { cookie: me.cookie },
    });
    expect(withCookie.statusCode).toBe(401);
    expect(withCookie.json().error.detail).toBe('Missing authorization header');
    const asBearer = await t.app.inject({ method: 'GET', url: '/api/v1/orgs/me', headers: bearer(me.token) });
    expect(asBearer.statusCode).toBe(401);
    expect(asBearer.json().error.detail).toBe('Invalid or expired token');
  });

  it('/internal/ refuses API keys: as Bearer, as X-API-Key, and in the session cookie', async () => {
    const me = await t.signUp();
    const key = (await me.post('/internal/keys', { name: 'k', scopes: [], expires_at: null })).json().token;
    const viaBearer = await t.app.inject({ method: 'GET', url: '/internal/keys', headers: bearer(key) });
    expectInternalError(viaBearer, {
      status: 401,
      type: 'unauthorized',
      detail: 'API keys are not accepted here; sign in to the web app',
    });
    const viaHeader = await t.app.inject({
      method: 'GET',
      url: '/internal/keys',
      headers: { 'x-api-key': key },
    });
    expectInternalError(viaHeader, { status: 401, type: 'unauthorized' });
    const viaCookie = await t.app.inject({
      method: 'GET',
      url: '/internal/keys',
      headers: { cookie: `tagtrail_session=${key}` },
    });
    expectInternalError(viaCookie, { status: 401, type: 'unauthorized' });
    // A session token as Bearer is not accepted either: only the cookie.
    const sessionAsBearer = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: bearer(me.token),
    });
    expectInternalError(sessionAsBearer, { status: 401, type: 'unauthorized' });
  });

  it('every state-changing /internal/ call needs the CSRF token', async () => {
    const me = await t.signUp();
    const calls = [
      { method: 'POST' as const, url: '/internal/keys', body: { name: 'k', scopes: [], expires_at: null } },
      {
        method: 'POST' as const,
        url: '/internal/keys/00000000-0000-4000-8000-000000000000/revoke',
        body: {},
      },
      {
        method: 'POST' as const,
        url: '/internal/readers',
        body: { name: 'r', family: 'generic-json', identity: 'r', topic: 'r', webhook: false },
      },
      {
        method: 'POST' as const,
        url: '/internal/readers/1/scan-points',
        body: { antenna: 1, location_id: 1 },
      },
      { method: 'PATCH' as const, url: '/internal/readers/1', body: { name: 'r' } },
      { method: 'PATCH' as const, url: '/internal/readers/1/scan-points/1', body: { antenna: 2 } },
      { method: 'DELETE' as const, url: '/internal/readers/1' },
      { method: 'DELETE' as const, url: '/internal/readers/1/scan-points/1' },
      {
        method: 'POST' as const,
        url: '/internal/handheld',
        body: { location: { id: 1 }, items: [{ asset_id: 1 }] },
      },
    ];
    for (const call of calls) {
      for (const csrf of [null, 'wrong']) {
        const res = await me.request({
          method: call.method,
          url: call.url,
          csrf,
          ...(call.body
            ? {
                headers: {
                  'content-type':
                    call.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
                },
                payload: JSON.stringify(call.body),
              }
            : {}),
        });
        expectInternalError(res, { status: 403, type: 'forbidden' });
      }
    }
    expect((await me.get('/internal/keys')).json().total_count).toBe(0);
    expect((await me.get('/internal/readers')).json().total_count).toBe(0);
  });

  /** A concrete URL for a route pattern: every path parameter 1 (ids of nothing here). */
  const concrete = (url: string) => url.replace(/:[a-z_]+/g, '1');

  it('every /internal/ route but sign-up and sign-in needs the session cookie', async () => {
    const routes = t.app.internalRouteList.filter((r) => !r.signedOut);
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const res = await t.app.inject({
        method: route.method as 'GET',
        url: concrete(route.url),
        ...(route.method === 'GET' || route.method === 'DELETE'
          ? {}
          : { headers: { 'content-type': 'application/json' }, payload: '{}' }),
      });
      expectInternalError(res, { status: 401, type: 'unauthorized', detail: 'Not signed in' });
    }
  });

  it('every state-changing /internal/ route refuses a missing or wrong CSRF token', async () => {
    const me = await t.signUp();
    const routes = t.app.internalRouteList.filter((r) => !r.signedOut && r.method !== 'GET');
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'POST /internal/assets',
        'PATCH /internal/assets/:asset_id',
        'POST /internal/locations',
        'PATCH /internal/locations/:location_id',
        'DELETE /internal/locations/:location_id',
        'POST /internal/locations/:location_id/rename',
        'POST /internal/locations/:location_id/tags',
        'DELETE /internal/locations/:location_id/tags/:tag_id',
        'PATCH /internal/readers/:reader_id',
        'PATCH /internal/readers/:reader_id/scan-points/:scan_point_id',
      ]),
    );
    for (const route of routes) {
      for (const csrf of [null, 'wrong', me.csrf.slice(0, -2)]) {
        const res = await me.request({
          method: route.method as 'POST',
          url: concrete(route.url),
          csrf,
          ...(route.method === 'DELETE'
            ? {}
            : {
                headers: {
                  'content-type':
                    route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
                },
                payload: '{}',
              }),
        });
        expectInternalError(res, { status: 403, type: 'forbidden' });
      }
    }
  });

  it('a session token of another deployment environment is refused', async () => {
    const me = await t.signUp();
    const claims = JSON.parse(Buffer.from(me.token.split('.')[1]!, 'base64url').toString());
    const preview = await t.services.tokens.sign(
      { use: 'session', id: claims.sub, orgId: me.orgId, scopes: [] },
      'preview',
    );
    const res = await t.app.inject({
      method: 'GET',
      url: '/internal/session',
      headers: { cookie: `tagtrail_session=${preview}` },
    });
    expectInternalError(res, { status: 401 });
  });
});

describe('organizations are walled off from each other', () => {
  let t: InternalTestApp;
  let a: Browser;
  let b: Browser;
  let bKey: { id: string; token: string };
  let bReader: { id: number; scanPointId: number };
  let bLocation: number;
  let bAsset: number;
  let aLocation: number;

  beforeAll(async () => {
    t = await buildInternalApp();
    a = await t.signUp({ organization: 'A' });
    b = await t.signUp({ organization: 'B' });
    const minted = (await b.post('/internal/keys', { name: 'B key', scopes: [], expires_at: null })).json();
    bKey = { id: minted.data.id, token: minted.token };
    bLocation = await insertLocation(t, b.orgId, { external_key: 'B-DOCK', name: 'B dock' });
    aLocation = await insertLocation(t, a.orgId, { external_key: 'A-DOCK', name: 'A dock' });
    bAsset = await insertAsset(t, b.orgId, { external_key: 'B-PALLET', name: 'B pallet', tag: 'E2000B' });
    const reader = (
      await b.post('/internal/readers', {
        name: 'B reader',
        family: 'generic-json',
        identity: 'b-1',
        topic: 'b/reader/1',
        webhook: false,
      })
    ).json().data;
    const point = (
      await b.post(`/internal/readers/${reader.id}/scan-points`, { antenna: 1, location_id: bLocation })
    ).json().data;
    bReader = { id: reader.id, scanPointId: point.id };
    const moved = await b.post('/internal/handheld', {
      location: { id: bLocation },
      items: [{ asset_id: bAsset }],
    });
    expect(moved.json().data.applied).toBe(1);
  });
  afterAll(() => t.close());

  it("lists never show the other organization's keys, readers, locations, assets or report rows", async () => {
    expect((await a.get('/internal/keys')).json()).toMatchObject({ data: [], total_count: 0 });
    expect((await a.get('/internal/readers')).json()).toMatchObject({ data: [], total_count: 0 });
    const tree = (await a.get('/internal/locations/tree')).json();
    expect(tree.data.map((n: { id: number }) => n.id)).toEqual([aLocation]);
    const picker = (await a.get('/internal/locations?q=dock')).json();
    expect(picker.data.map((n: { id: number }) => n.id)).toEqual([aLocation]);
    expect((await a.get('/internal/assets')).json()).toMatchObject({ data: [], total_count: 0 });
    expect((await a.get('/internal/report')).json()).toMatchObject({ data: [], total_count: 0 });
    // B sees its own.
    expect((await b.get('/internal/report')).json().total_count).toBe(1);
  });

  it('ids of the other organization are 404 (or fk_not_found in a body), and change nothing', async () => {
    expectInternalError(await a.post(`/internal/keys/${bKey.id}/revoke`, {}), {
      status: 404,
      type: 'not_found',
    });
    const stillWorks = await t.app.inject({
      method: 'GET',
      url: '/api/v1/orgs/me',
      headers: bearer(bKey.token),
    });
    expect(stillWorks.statusCode).toBe(200);

    expectInternalError(await a.del(`/internal/readers/${bReader.id}`), { status: 404, type: 'not_found' });
    const patchAsA = (url: string, body: unknown) =>
      a.request({
        method: 'PATCH',
        url,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: JSON.stringify(body),
      });
    expectInternalError(
      await patchAsA(`/internal/readers/${bReader.id}`, { name: 'taken', topic: 'a/taken' }),
      {
        status: 404,
        type: 'not_found',
      },
    );
    expectInternalError(
      await patchAsA(`/internal/readers/${bReader.id}/scan-points/${bReader.scanPointId}`, {
        location_id: aLocation,
      }),
      { status: 404, type: 'not_found' },
    );
    expectInternalError(
      await a.post(`/internal/readers/${bReader.id}/scan-points`, { antenna: 2, location_id: aLocation }),
      {
        status: 404,
        type: 'not_found',
      },
    );
    expectInternalError(await a.del(`/internal/readers/${bReader.id}/scan-points/${bReader.scanPointId}`), {
      status: 404,
      type: 'not_found',
    });
    const aReader = (
      await a.post('/internal/readers', {
        name: 'A reader',
        family: 'generic-json',
        identity: 'a-1',
        topic: 'a/1',
        webhook: false,
      })
    ).json().data;
    expectInternalError(await a.del(`/internal/readers/${aReader.id}/scan-points/${bReader.scanPointId}`), {
      status: 404,
      type: 'not_found',
    });
    expectInternalError(
      await patchAsA(`/internal/readers/${aReader.id}/scan-points/${bReader.scanPointId}`, { antenna: 5 }),
      { status: 404, type: 'not_found' },
    );
    const aPoint = (
      await a.post(`/internal/readers/${aReader.id}/scan-points`, { antenna: 1, location_id: aLocation })
    ).json().data;
    const ontoForeign = await patchAsA(`/internal/readers/${aReader.id}/scan-points/${aPoint.id}`, {
      location_id: bLocation,
    });
    expect(expectInternalError(ontoForeign, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'location_id', code: 'fk_not_found' }),
    ]);
    const foreignLocation = await a.post(`/internal/readers/${aReader.id}/scan-points`, {
      antenna: 1,
      location_id: bLocation,
    });
    const error = expectInternalError(foreignLocation, { status: 400, type: 'validation_error' });
    expect(error.fields).toEqual([expect.objectContaining({ field: 'location_id', code: 'fk_not_found' })]);

    expectInternalError(await a.get(`/internal/locations/tree?parent_id=${bLocation}`), { status: 404 });
    expectInternalError(await a.get(`/internal/assets/${bAsset}/history`), { status: 404 });
    const handheld = await a.post('/internal/handheld', {
      location: { id: bLocation },
      items: [{ asset_id: bAsset }],
    });
    expect(expectInternalError(handheld, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'location', code: 'fk_not_found' }),
    ]);
    const intoOwn = await a.post('/internal/handheld', {
      location: { id: aLocation },
      items: [{ asset_id: bAsset }, { asset_external_key: 'B-PALLET' }, { tag: 'E2000B' }],
    });
    expect(intoOwn.json().data).toMatchObject({ applied: 0, unknown: 3 });

    // Locations: every write on B's location by id is 404; B's location as a parent is fk_not_found.
    const patch = (url: string, body: unknown) =>
      a.request({
        method: 'PATCH',
        url,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: JSON.stringify(body),
      });
    const bTag = (
      await t.database.db.pool.query<{ id: number }>(
        `INSERT INTO tags (org_id, tag_type, value, location_id) VALUES ($1, 'rfid', 'B-LOC-TAG', $2) RETURNING id`,
        [b.orgId, bLocation],
      )
    ).rows[0]!.id;
    for (const res of [
      await a.get(`/internal/locations/${bLocation}`),
      await a.get(`/internal/locations/${bLocation}/assets`),
      await patch(`/internal/locations/${bLocation}`, { name: 'taken over' }),
      await a.post(`/internal/locations/${bLocation}/rename`, { external_key: 'MINE' }),
      await a.post(`/internal/locations/${bLocation}/tags`, { tag_type: 'rfid', value: 'A-TAG' }),
      await a.del(`/internal/locations/${bLocation}/tags/${bTag}`),
      await a.del(`/internal/locations/${bLocation}`),
    ]) {
      expectInternalError(res, { status: 404, type: 'not_found' });
    }
    expectInternalError(await a.del(`/internal/locations/${aLocation}/tags/${bTag}`), { status: 404 });
    const under = await a.post('/internal/locations', { name: 'Sub', parent_id: bLocation });
    expect(expectInternalError(under, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'parent_id', code: 'fk_not_found' }),
    ]);
    const move = await patch(`/internal/locations/${aLocation}`, { parent_id: bLocation });
    expect(expectInternalError(move, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'parent_id', code: 'fk_not_found' }),
    ]);
    const search = (await a.get('/internal/locations/tree/search?q=dock')).json();
    expect(search.data.map((n: { id: number }) => n.id)).toEqual([aLocation]);
    const bView = (await b.get(`/internal/locations/${bLocation}`)).json().data;
    expect(bView).toMatchObject({ name: 'B dock', external_key: 'B-DOCK', tags: [{ id: bTag }] });

    // Asset writes of the web app: B's asset and its tag are not A's to see or change.
    const bTagId = (await b.get(`/internal/assets/${bAsset}`)).json().data.tags[0].id;
    for (const res of [
      await a.get(`/internal/assets/${bAsset}`),
      await patch(`/internal/assets/${bAsset}`, { name: 'taken' }),
      await a.post(`/internal/assets/${bAsset}/rename`, { external_key: 'TAKEN' }),
      await a.post(`/internal/assets/${bAsset}/tags`, { tag_type: 'rfid', value: 'A-TAG' }),
      await a.del(`/internal/assets/${bAsset}/tags/${bTagId}`),
      await a.del(`/internal/assets/${bAsset}`),
    ]) {
      expectInternalError(res, { status: 404, type: 'not_found' });
    }
    const aAsset = (await a.post('/internal/assets', { name: 'A thing' })).json().data.id;
    expectInternalError(await a.del(`/internal/assets/${aAsset}/tags/${bTagId}`), {
      status: 404,
      type: 'not_found',
    });
    const bNow = (await b.get(`/internal/assets/${bAsset}`)).json().data;
    expect(bNow).toMatchObject({ name: 'B pallet', external_key: 'B-PALLET', tags: [{ value: 'E2000B' }] });

    // B's data is untouched.
    const readers = (await b.get('/internal/readers')).json().data;
    expect(readers).toHaveLength(1);
    expect(readers[0]).toMatchObject({ name: 'B reader', topic: 'b/reader/1' });
    expect(readers[0].scan_points).toEqual([expect.objectContaining({ antenna: 1, location_id: bLocation })]);
    const report = (await b.get('/internal/report')).json().data;
    expect(report).toEqual([expect.objectContaining({ asset_id: bAsset, location_id: bLocation })]);
  });
});
