import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertLocation,
} from './helpers.js';

describe('/internal/readers and scan points', () => {
  let t: InternalTestApp;
  let me: Browser;
  let dock: number;
  let shelf: number;
  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    dock = await insertLocation(t, me.orgId, { external_key: 'DOCK-1', name: 'Dock 1' });
    shelf = await insertLocation(t, me.orgId, { external_key: 'SHELF-1', name: 'Shelf 1' });
  });
  afterAll(() => t.close());

  it('creates, lists with scan points, and deletes readers and their scan points', async () => {
    const created = await me.post('/internal/readers', {
      name: 'Dock door',
      family: 'impinj-r700',
      identity: 'SN-0001',
      topic: 'site/dock/r700',
      webhook: false,
    });
    expect(created.statusCode, created.body).toBe(201);
    const reader = created.json();
    expect(reader).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Dock door',
        family: 'impinj-r700',
        identity: 'SN-0001',
        topic: 'site/dock/r700',
        webhook: false,
        mqtt_username: expect.stringMatching(/^reader-\d+$/),
        mqtt_credentials: true,
        created_at: expect.stringMatching(/\.\d{3}Z$/),
        last_message_at: null,
        good_reads: 0,
        bad_reads: 0,
        unknown_reads: 0,
        health: { connected: null, reads_per_minute: 0, errors_per_minute: 0, last_error_at: null },
        scan_points: [],
      },
      mqtt_password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const id = reader.data.id;
    expect(reader.data.mqtt_username).toBe(`reader-${id}`);

    const p1 = await me.post(`/internal/readers/${id}/scan-points`, { antenna: 1, location_id: dock });
    expect(p1.statusCode, p1.body).toBe(201);
    expect(p1.json().data).toEqual({
      id: expect.any(Number),
      antenna: 1,
      location_id: dock,
      location_external_key: 'DOCK-1',
      location_name: 'Dock 1',
    });
    const p2 = await me.post(`/internal/readers/${id}/scan-points`, { antenna: null, location_id: shelf });
    expect(p2.statusCode, p2.body).toBe(201);
    expect(p2.json().data.antenna).toBeNull();
    const dup = await me.post(`/internal/readers/${id}/scan-points`, { antenna: 1, location_id: shelf });
    expectInternalError(dup, { status: 409, type: 'conflict' });

    const list = (await me.get('/internal/readers')).json();
    expect(list).toMatchObject({ limit: 50, offset: 0, total_count: 1 });
    expect(list.data[0].scan_points).toEqual([
      {
        id: p2.json().data.id,
        antenna: null,
        location_id: shelf,
        location_external_key: 'SHELF-1',
        location_name: 'Shelf 1',
      },
      p1.json().data,
    ]);

    const removed = await me.del(`/internal/readers/${id}/scan-points/${p1.json().data.id}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expectInternalError(await me.del(`/internal/readers/${id}/scan-points/${p1.json().data.id}`), {
      status: 404,
    });
    expect((await me.get('/internal/readers')).json().data[0].scan_points).toHaveLength(1);

    expect((await me.del(`/internal/readers/${id}`)).statusCode).toBe(204);
    expectInternalError(await me.del(`/internal/readers/${id}`), { status: 404, type: 'not_found' });
    expect((await me.get('/internal/readers')).json().total_count).toBe(0);
  });

  it('issues a webhook secret once when asked', async () => {
    const res = await me.post('/internal/readers', {
      name: 'Pusher',
      family: 'zebra-fx',
      identity: 'FX-9',
      topic: 'site/fx9',
      webhook: true,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().webhook_secret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(res.json().data.webhook).toBe(true);
    const list = await me.get('/internal/readers');
    expect(JSON.stringify(list.json())).not.toContain(res.json().webhook_secret);
    const plain = await me.post('/internal/readers', {
      name: 'Plain',
      family: 'csl-cs463',
      identity: 'CS-1',
      topic: 'site/cs1',
      webhook: false,
    });
    expect(plain.json()).not.toHaveProperty('webhook_secret');
  });

  it('rotates and revokes MQTT credentials; the password is shown once', async () => {
    const created = await me.post('/internal/readers', {
      name: 'Rotated',
      family: 'impinj-r700',
      identity: 'SN-ROT',
      topic: 'site/rotated',
      webhook: false,
    });
    const id = created.json().data.id;
    const first = created.json().mqtt_password;
    const rotated = await me.post(`/internal/readers/${id}/mqtt-credentials`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json()).toMatchObject({
      data: { id, mqtt_username: `reader-${id}`, mqtt_credentials: true },
      mqtt_password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(rotated.json().mqtt_password).not.toBe(first);
    const listed = JSON.stringify((await me.get('/internal/readers')).json());
    expect(listed).not.toContain(first);
    expect(listed).not.toContain(rotated.json().mqtt_password);

    const revoked = await me.del(`/internal/readers/${id}/mqtt-credentials`);
    expect(revoked.statusCode, revoked.body).toBe(204);
    const after = (await me.get('/internal/readers')).json().data.find((r: { id: number }) => r.id === id);
    expect(after.mqtt_credentials).toBe(false);
    // Issued again by rotating.
    expect((await me.post(`/internal/readers/${id}/mqtt-credentials`)).json().data.mqtt_credentials).toBe(
      true,
    );

    // Another organization's user cannot touch them.
    const other = (await t.newOrg()).browser;
    expectInternalError(await other.post(`/internal/readers/${id}/mqtt-credentials`), { status: 404 });
    expectInternalError(await other.del(`/internal/readers/${id}/mqtt-credentials`), { status: 404 });
    expectInternalError(await me.del('/internal/readers/2147483000/mqtt-credentials'), { status: 404 });
  });

  it('validates readers and scan points', async () => {
    const bad = await me.post('/internal/readers', {
      name: '',
      family: 'acme',
      identity: 'x',
      topic: 'a/#',
      webhook: 'yes',
    });
    const error = expectInternalError(bad, { status: 400, type: 'validation_error' });
    expect(error.fields!.map((f) => f.field).sort()).toEqual(['family', 'name', 'webhook']);
    const wildcard = await me.post('/internal/readers', {
      name: 'w',
      family: 'generic-json',
      identity: 'w-1',
      topic: 'a/#',
      webhook: false,
    });
    expect(expectInternalError(wildcard, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'topic', code: 'invalid_value' }),
    ]);
    const r = (
      await me.post('/internal/readers', {
        name: 'v',
        family: 'generic-json',
        identity: 'v-1',
        topic: 'v/1',
        webhook: false,
      })
    ).json().data;
    const taken = await me.post('/internal/readers', {
      name: 'v2',
      family: 'generic-json',
      identity: 'v-2',
      topic: 'v/1',
      webhook: false,
    });
    expectInternalError(taken, { status: 409, type: 'conflict' });
    const missing = await me.post(`/internal/readers/${r.id}/scan-points`, {
      antenna: 1,
      location_id: 2147483000,
    });
    expect(expectInternalError(missing, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'location_id', code: 'fk_not_found' }),
    ]);
    await t.database.db.pool.query('UPDATE locations SET deleted_at = now() WHERE id = $1', [shelf]);
    const deleted = await me.post(`/internal/readers/${r.id}/scan-points`, {
      antenna: 3,
      location_id: shelf,
    });
    expect(expectInternalError(deleted, { status: 400 }).fields![0]!.code).toBe('fk_not_found');
    const antenna = await me.post(`/internal/readers/${r.id}/scan-points`, {
      antenna: -1,
      location_id: dock,
    });
    expectInternalError(antenna, { status: 400, type: 'validation_error' });
    expectInternalError(await me.del('/internal/readers/abc'), { status: 400, type: 'validation_error' });
    expectInternalError(await me.del('/internal/readers/2147483000'), { status: 404 });
  });
  it('edits a reader and its scan points with the create rules and answers', async () => {
    const make = async (identity: string, topic: string) =>
      (
        await me.post('/internal/readers', {
          name: identity,
          family: 'impinj-r700',
          identity,
          topic,
          webhook: false,
        })
      ).json().data;
    const reader = await make('ED-1', 'site/edit/1');
    const other = await make('ED-2', 'site/edit/2');
    const patch = (url: string, body: unknown) =>
      me.request({
        method: 'PATCH',
        url,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: JSON.stringify(body),
      });

    const edited = await patch(`/internal/readers/${reader.id}`, {
      name: 'Gate 4',
      family: 'zebra-fx',
      identity: 'FX-44',
      topic: 'site/gate/4',
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toEqual({
      data: {
        ...reader,
        name: 'Gate 4',
        family: 'zebra-fx',
        identity: 'FX-44',
        topic: 'site/gate/4',
      },
    });
    const listed = (await me.get('/internal/readers'))
      .json()
      .data.find((r: { id: number }) => r.id === reader.id);
    expect(listed).toEqual(edited.json().data);
    // An empty edit changes nothing.
    const same = await patch(`/internal/readers/${reader.id}`, {});
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json().data).toEqual(edited.json().data);

    // The webhook: a secret issued once on asking, kept when asked again, withdrawn on false.
    const hooked = await patch(`/internal/readers/${reader.id}`, { webhook: true });
    expect(hooked.json().webhook_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hooked.json().data.webhook).toBe(true);
    const again = await patch(`/internal/readers/${reader.id}`, { webhook: true });
    expect(again.json()).not.toHaveProperty('webhook_secret');
    const unhooked = await patch(`/internal/readers/${reader.id}`, { webhook: false });
    expect(unhooked.json().data.webhook).toBe(false);

    // The create's validation and conflicts.
    const bad = await patch(`/internal/readers/${reader.id}`, { name: '', family: 'acme', webhook: 'yes' });
    expect(
      expectInternalError(bad, { status: 400, type: 'validation_error' })
        .fields!.map((f) => f.field)
        .sort(),
    ).toEqual(['family', 'name', 'webhook']);
    const wildcard = await patch(`/internal/readers/${reader.id}`, { topic: 'site/+/x' });
    expect(expectInternalError(wildcard, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'topic', code: 'invalid_value' }),
    ]);
    const padded = await patch(`/internal/readers/${reader.id}`, { identity: ' FX ' });
    expect(expectInternalError(padded, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'identity', code: 'invalid_value' }),
    ]);
    expectInternalError(await patch(`/internal/readers/${reader.id}`, { extra: 1 }), {
      status: 400,
      type: 'validation_error',
    });
    expectInternalError(await patch(`/internal/readers/${reader.id}`, { topic: other.topic }), {
      status: 409,
      type: 'conflict',
      detail: `topic ${other.topic} is already used by another reader`,
    });
    expectInternalError(await patch(`/internal/readers/${reader.id}`, { identity: other.identity }), {
      status: 409,
      type: 'conflict',
    });
    expectInternalError(await patch('/internal/readers/2147483000', { name: 'x' }), { status: 404 });
    expect(
      (await me.get('/internal/readers')).json().data.find((r: { id: number }) => r.id === reader.id),
    ).toEqual(unhooked.json().data);

    // Scan points: another antenna or location, with addScanPoint's rules.
    const p1 = (
      await me.post(`/internal/readers/${reader.id}/scan-points`, { antenna: 1, location_id: dock })
    ).json().data;
    const p2 = (
      await me.post(`/internal/readers/${reader.id}/scan-points`, { antenna: 2, location_id: dock })
    ).json().data;
    const moved = await patch(`/internal/readers/${reader.id}/scan-points/${p1.id}`, { antenna: 3 });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data).toEqual({ ...p1, antenna: 3 });
    const any = await patch(`/internal/readers/${reader.id}/scan-points/${p1.id}`, { antenna: null });
    expect(any.json().data.antenna).toBeNull();
    expectInternalError(await patch(`/internal/readers/${reader.id}/scan-points/${p1.id}`, { antenna: 2 }), {
      status: 409,
      type: 'conflict',
      detail: `reader ${reader.id} already has a scan point for antenna 2`,
    });
    const missing = await patch(`/internal/readers/${reader.id}/scan-points/${p2.id}`, {
      location_id: 2147483000,
    });
    expect(expectInternalError(missing, { status: 400 }).fields).toEqual([
      expect.objectContaining({ field: 'location_id', code: 'fk_not_found' }),
    ]);
    expectInternalError(
      await patch(`/internal/readers/${reader.id}/scan-points/${p2.id}`, { antenna: 70000 }),
      {
        status: 400,
        type: 'validation_error',
      },
    );
    // Another reader's point is not this reader's.
    expectInternalError(await patch(`/internal/readers/${other.id}/scan-points/${p2.id}`, { antenna: 9 }), {
      status: 404,
    });
    const points = (await me.get('/internal/readers'))
      .json()
      .data.find((r: { id: number }) => r.id === reader.id).scan_points;
    expect(points).toEqual([{ ...p1, antenna: null }, p2]);
  });
});
