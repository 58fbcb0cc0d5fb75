import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertLocation,
} from './helpers.js';

/**
 * The web app's asset writes (docs/web-app.md): the public API's services behind
 * /internal/, so every answer, error or not, is the one an integrator gets.
 */
describe('/internal/ asset writes', () => {
  let t: InternalTestApp;
  let me: Browser;
  let apiKey: string;

  const patch = (url: string, body: unknown, type = 'application/merge-patch+json') =>
    me.request({ method: 'PATCH', url, headers: { 'content-type': type }, payload: JSON.stringify(body) });

  /** The same call on the public API, with a key of the same organization. */
  const publicCall = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
      },
      payload: JSON.stringify(body),
    });

  /** A metadata object nested `levels` deep (the object itself is level 1). */
  const deep = (levels: number): Record<string, unknown> =>
    levels <= 1 ? { leaf: 1 } : { next: deep(levels - 1) };

  /** An error as a person reads it: everything but the per-request parts. */
  const readable = (body: string) => {
    const { instance: _i, request_id: _r, ...rest } = JSON.parse(body).error;
    return rest;
  };

  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    const minted = await me.post('/internal/keys', {
      name: 'compare',
      scopes: ['assets:read', 'assets:write'],
      expires_at: null,
    });
    apiKey = minted.json().token;
  });
  afterAll(() => t.close());

  it('creates an asset with tags, shows it in the list and on its own', async () => {
    const res = await me.post('/internal/assets', {
      name: 'Pallet jack',
      external_key: 'PJ-1',
      description: 'Yellow',
      metadata: { weight_kg: 80, colour: 'yellow' },
      tags: [
        { tag_type: 'rfid', value: 'E200-0001' },
        { tag_type: 'barcode', value: 'PJ-BAR-1' },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json().data;
    expect(created).toMatchObject({
      external_key: 'PJ-1',
      name: 'Pallet jack',
      description: 'Yellow',
      is_active: true,
      metadata: { weight_kg: 80, colour: 'yellow' },
      location_id: null,
    });
    expect(created.tags.map((tag: { value: string }) => tag.value).sort()).toEqual(['E200-0001', 'PJ-BAR-1']);
    const list = (await me.get('/internal/assets?q=pj-bar')).json();
    expect(list.data.map((a: { id: number }) => a.id)).toEqual([created.id]);
    const one = (await me.get(`/internal/assets/${created.id}`)).json().data;
    expect(one).toMatchObject({
      ...created,
      location_name: null,
      location_path: [],
      located_since: null,
      last_seen_at: null,
    });
    // Without a key, the server assigns ASSET-NNNN as on the API.
    const auto = await me.post('/internal/assets', { name: 'Trolley' });
    expect(auto.json().data.external_key).toMatch(/^ASSET-\d+$/);
  });

  it('refuses what the API refuses, with the same error, field by field', async () => {
    const cases: [string, 'POST' | 'PATCH', string, unknown, number][] = [];
    const target = (await me.post('/internal/assets', { name: 'Target', external_key: 'TGT-1' })).json().data;
    cases.push(
      ['blank name', 'POST', '', { name: ' ' }, 400],
      ['bad key and long description', 'POST', '', { name: 'x', external_key: 'a b', description: '' }, 400],
      ['location on create', 'POST', '', { name: 'x', location_id: 1 }, 400],
      ['key taken', 'POST', '', { name: 'x', external_key: 'PJ-1' }, 409],
      ['tag taken', 'POST', '', { name: 'x', tags: [{ tag_type: 'rfid', value: 'E200-0001' }] }, 409],
      [
        'window',
        'PATCH',
        `/${target.id}`,
        { valid_from: '2030-01-01T00:00:00Z', valid_to: '2029-01-01T00:00:00Z' },
        400,
      ],
      ['key on patch', 'PATCH', `/${target.id}`, { external_key: 'OTHER' }, 400],
      ['null metadata', 'PATCH', `/${target.id}`, { metadata: null }, 400],
      ['metadata too deep', 'PATCH', `/${target.id}`, { metadata: deep(11) }, 400],
    );
    for (const [what, method, suffix, body, status] of cases) {
      const internal =
        method === 'POST'
          ? await me.post(`/internal/assets${suffix}`, body)
          : await patch(`/internal/assets${suffix}`, body);
      const external = await publicCall(method, `/api/v1/assets${suffix}`, body);
      expect(internal.statusCode, `${what}: ${internal.body}`).toBe(status);
      expect(external.statusCode, what).toBe(status);
      expect(readable(internal.body), what).toEqual(readable(external.body));
    }
    // The blank name is named on its field, as the web form shows it.
    const blank = expectInternalError(await me.post('/internal/assets', { name: ' ' }), {
      status: 400,
      type: 'validation_error',
    });
    expect(blank.fields).toEqual([expect.objectContaining({ field: 'name', code: 'invalid_value' })]);
  });

  it('edits every field of the update body; PATCH takes a merge patch', async () => {
    const id = (await me.post('/internal/assets', { name: 'Forklift', metadata: { a: 1 } })).json().data.id;
    const res = await patch(`/internal/assets/${id}`, {
      name: 'Forklift 2',
      description: 'Electric',
      is_active: false,
      metadata: { seats: 1, tags: ['x'] },
      valid_from: '2020-01-01T00:00:00Z',
      valid_to: '2040-01-01T00:00:00.5Z',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      name: 'Forklift 2',
      description: 'Electric',
      is_active: false,
      metadata: { seats: 1, tags: ['x'] },
      valid_from: '2020-01-01T00:00:00.000Z',
      valid_to: '2040-01-01T00:00:00.500Z',
    });
    const cleared = await patch(`/internal/assets/${id}`, { description: null, valid_to: null });
    expect(cleared.json().data).toMatchObject({ description: null, valid_to: null });
    expectInternalError(await patch(`/internal/assets/${id}`, { name: 'x' }, 'application/json'), {
      status: 415,
      type: 'unsupported_media_type',
    });
    expectInternalError(await patch(`/internal/assets/${id}`, { name: 'x', colour: 'red' }), {
      status: 400,
      type: 'validation_error',
    });
  });

  it('renames, attaches and detaches tags, deletes', async () => {
    const id = (await me.post('/internal/assets', { name: 'Cart', external_key: 'CART-1' })).json().data.id;
    const renamed = await me.post(`/internal/assets/${id}/rename`, { external_key: 'CART-2' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ data: { external_key: 'CART-2' }, descendant_count_affected: 0 });
    const taken = expectInternalError(
      await me.post(`/internal/assets/${id}/rename`, { external_key: 'PJ-1' }),
      {
        status: 409,
        type: 'conflict',
      },
    );
    expect(taken.detail).toMatch(/PJ-1 is already used by asset \d+/);

    const attached = await me.post(`/internal/assets/${id}/tags`, { tag_type: 'ble', value: 'AA:BB:CC' });
    expect(attached.statusCode, attached.body).toBe(201);
    const tag = attached.json().data;
    expect(tag).toMatchObject({ tag_type: 'ble', value: 'AA:BB:CC' });
    expectInternalError(
      await me.post(`/internal/assets/${id}/tags`, { tag_type: 'ble', value: 'AA:BB:CC' }),
      {
        status: 409,
        type: 'conflict',
      },
    );
    const badType = expectInternalError(
      await me.post(`/internal/assets/${id}/tags`, { tag_type: 'qr', value: 'x' }),
      {
        status: 400,
      },
    );
    expect(badType.fields).toEqual([expect.objectContaining({ field: 'tag_type' })]);
    expect((await me.get(`/internal/assets/${id}`)).json().data.tags).toEqual([tag]);
    expect((await me.del(`/internal/assets/${id}/tags/${tag.id}`)).statusCode).toBe(204);
    expectInternalError(await me.del(`/internal/assets/${id}/tags/${tag.id}`), {
      status: 404,
      type: 'not_found',
    });
    expect((await me.get(`/internal/assets/${id}`)).json().data.tags).toEqual([]);

    expect((await me.del(`/internal/assets/${id}`)).statusCode).toBe(204);
    expectInternalError(await me.get(`/internal/assets/${id}`), { status: 404, type: 'not_found' });
    expectInternalError(await me.del(`/internal/assets/${id}`), { status: 404, type: 'not_found' });
    // Its key is free again.
    expect((await me.post('/internal/assets', { name: 'Cart', external_key: 'CART-2' })).statusCode).toBe(
      201,
    );
  });

  it('a handheld location that does not exist is named as it was scanned or typed, not as JSON', async () => {
    for (const [location, message] of [
      [{ id: 987654 }, 'No live location with id 987654'],
      [{ external_key: 'NO-SUCH-DOCK' }, 'No live location with key "NO-SUCH-DOCK"'],
      [{ tag: 'dock-1' }, 'No live location carrying the tag "dock-1"'],
    ] as const) {
      const res = await me.post('/internal/handheld', { location, items: [{ tag: 'X-1' }] });
      expectInternalError(res, { status: 400, type: 'validation_error' });
      expect(res.json().error.fields[0]).toMatchObject({ field: 'location', code: 'fk_not_found', message });
    }
  });

  it("the asset's page data: where it is, in which part of the tree, since when; history with names", async () => {
    const site = await insertLocation(t, me.orgId, { external_key: 'SITE', name: 'Main site' });
    const hall = await insertLocation(t, me.orgId, { external_key: 'HALL', name: 'Hall', parent_id: site });
    const dock = await insertLocation(t, me.orgId, { external_key: 'DOCK', name: 'Dock', parent_id: site });
    const id = (await me.post('/internal/assets', { name: 'Crate' })).json().data.id;
    const seen = async (location: number, at: string) => {
      const res = await me.post('/internal/handheld', {
        location: { id: location },
        items: [{ asset_id: id }],
        observed_at: at,
      });
      expect(res.json().data.applied, res.body).toBe(1);
    };
    await seen(dock, '2026-01-01T08:00:00.000Z');
    await seen(dock, '2026-01-01T09:00:00.000Z');
    await seen(hall, '2026-01-01T10:00:00.000Z');

    const one = (await me.get(`/internal/assets/${id}`)).json().data;
    expect(one).toMatchObject({
      location_id: hall,
      location_external_key: 'HALL',
      location_name: 'Hall',
      located_since: '2026-01-01T10:00:00.000Z',
      last_seen_at: '2026-01-01T10:00:00.000Z',
      location_path: [
        { id: site, external_key: 'SITE', name: 'Main site' },
        { id: hall, external_key: 'HALL', name: 'Hall' },
      ],
    });

    const history = (await me.get(`/internal/assets/${id}/history`)).json();
    expect(history.total_count).toBe(2);
    expect(history.data).toEqual([
      {
        event_observed_at: '2026-01-01T10:00:00.000Z',
        location_id: hall,
        location_external_key: 'HALL',
        location_name: 'Hall',
        // Seen once so far: the API's duration is 0; `current` tells the app it is ongoing.
        duration_seconds: 0,
        current: true,
      },
      {
        event_observed_at: '2026-01-01T08:00:00.000Z',
        location_id: dock,
        location_external_key: 'DOCK',
        location_name: 'Dock',
        duration_seconds: 7200,
        current: false,
      },
    ]);
    // Past the first page the current stay is still told apart.
    const second = (await me.get(`/internal/assets/${id}/history?limit=1&offset=1`)).json();
    expect(second.data.map((r: { current: boolean }) => r.current)).toEqual([false]);
  });
});
