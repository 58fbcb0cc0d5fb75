/**
 * DELETE /api/v1/locations/{location_id} (States and transitions) and
 * POST /api/v1/locations/{location_id}/rename (Location write rules).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import {
  BASE,
  type Client,
  client,
  expectConflict,
  expectNotFound,
  fieldCodes,
  type LocationBody,
  placeAsset,
  setWindow,
} from './helpers.js';

let t: TestApp;
let c: Client;
beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
});
afterAll(() => t.close());

const url = (l: { id: number }) => `${BASE}/${l.id}`;
const rename = (l: { id: number }, body: unknown) => c.post(`${url(l)}/rename`, body);

describe('DELETE /api/v1/locations/{location_id}', () => {
  it('a live location with no descendants and no placed assets is soft-deleted: 204 with an empty body', async () => {
    const l = await c.create({ external_key: 'DEL-1', name: 'x' });
    const res = await c.del(url(l));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectNotFound(await c.get(url(l)));
    expect((await c.list(`${BASE}?external_key=DEL-1`)).total_count).toBe(0);
    const [deleted] = (await c.list(`${BASE}?external_key=DEL-1&include_deleted=true`)).data;
    expect(deleted).toMatchObject({ id: l.id, external_key: 'DEL-1', tags: [] });
    expect(Date.parse(deleted!.deleted_at!)).toBeGreaterThanOrEqual(Date.parse(l.created_at));
    expect(Date.parse(deleted!.updated_at)).toBeGreaterThan(Date.parse(l.updated_at));
  });

  it('deleting again is 404', async () => {
    const l = await c.create({ name: 'x' });
    expect((await c.del(url(l))).statusCode).toBe(204);
    expectNotFound(await c.del(url(l)));
    expectNotFound(await c.del(`${BASE}/2147483647`));
  });

  it('a location with a descendant location is 409 conflict and stays live (no cascade)', async () => {
    const parent = await c.create({ external_key: 'DEL-PARENT', name: 'parent' });
    const child = await c.create({ name: 'child', parent_id: parent.id });
    const error = expectConflict(await c.del(url(parent)));
    expect(error.detail).toContain('DEL-PARENT');
    expect(await c.fetch(parent.id)).toEqual(parent);
    expect((await c.fetch(child.id)).deleted_at).toBeNull();
    // Once the child is gone the parent can go.
    expect((await c.del(url(child))).statusCode).toBe(204);
    expect((await c.del(url(parent))).statusCode).toBe(204);
  });

  it('a child outside its validity window still counts as a descendant', async () => {
    const parent = await c.create({ name: 'parent' });
    const child = await c.create({ name: 'child', parent_id: parent.id });
    await setWindow(t, child.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    expectConflict(await c.del(url(parent)));
  });

  it('a location with a live asset placed directly at it is 409 conflict', async () => {
    const l = await c.create({ name: 'shelf' });
    const assetId = await placeAsset(t, c.org.id, l.id, 'ASSET-ON-SHELF');
    const error = expectConflict(await c.del(url(l)));
    expect(error.detail).toMatch(/asset/);
    expect(await c.fetch(l.id)).toEqual(l);
    // A soft-deleted asset there does not block the delete.
    await t.database.db.pool.query('UPDATE assets SET deleted_at = now() WHERE id = $1', [assetId]);
    expect((await c.del(url(l))).statusCode).toBe(204);
  });

  it('assets placed at a descendant block the descendant, not the ancestor once the descendant moves', async () => {
    const parent = await c.create({ name: 'parent' });
    const child = await c.create({ name: 'child', parent_id: parent.id });
    await placeAsset(t, c.org.id, child.id, 'ASSET-IN-CHILD');
    expectConflict(await c.del(url(child)));
    expect((await c.patch(url(child), { parent_id: null })).statusCode).toBe(200);
    expect((await c.del(url(parent))).statusCode).toBe(204);
  });

  it('soft-deleted children do not block the delete', async () => {
    const parent = await c.create({ name: 'parent' });
    const child = await c.create({ name: 'child', parent_id: parent.id });
    expect((await c.del(url(child))).statusCode).toBe(204);
    expect((await c.del(url(parent))).statusCode).toBe(204);
  });

  it('releases its tags and its external_key for reuse at once', async () => {
    const l = await c.create({
      external_key: 'DEL-TAGGED',
      name: 'x',
      tags: [{ tag_type: 'rfid', value: 'DEL-TAG-1' }],
    });
    expect((await c.del(url(l))).statusCode).toBe(204);
    const again = await c.create({
      external_key: 'DEL-TAGGED',
      name: 'y',
      tags: [{ tag_type: 'rfid', value: 'DEL-TAG-1' }],
    });
    expect(again.tags[0]!.value).toBe('DEL-TAG-1');
    expect((await c.list(`${BASE}?q=del-tag-1`)).data.map((x) => x.id)).toEqual([again.id]);
  });

  it('deletes a location outside its validity window', async () => {
    const l = await c.create({ name: 'future', valid_from: '2999-01-01T00:00:00Z' });
    expect((await c.del(url(l))).statusCode).toBe(204);
  });
});

describe('POST /api/v1/locations/{location_id}/rename', () => {
  async function subtree(prefix: string) {
    const root = await c.create({ external_key: `${prefix}-ROOT`, name: 'root' });
    const a = await c.create({ external_key: `${prefix}-A`, name: 'a', parent_id: root.id });
    const b = await c.create({ external_key: `${prefix}-B`, name: 'b', parent_id: root.id });
    const a1 = await c.create({ external_key: `${prefix}-A1`, name: 'a1', parent_id: a.id });
    return { root, a, b, a1 };
  }

  it('changes only that row external_key and answers data: <Location> and descendant_count_affected', async () => {
    const { root, a, b, a1 } = await subtree('RN');
    const res = await rename(root, { external_key: 'RN-NEW' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'descendant_count_affected']);
    expect(body.descendant_count_affected).toBe(3);
    expect(body.data).toEqual({ ...root, external_key: 'RN-NEW', updated_at: body.data.updated_at });
    expect(Date.parse(body.data.updated_at)).toBeGreaterThan(Date.parse(root.updated_at));
    expect(await c.fetch(root.id)).toEqual(body.data);
    // Descendants are not modified; their parent's key simply reads the new value.
    for (const d of [a, b, a1] as LocationBody[]) {
      const now = await c.fetch(d.id);
      expect({ ...now, parent_external_key: d.parent_external_key }).toEqual(d);
    }
    expect((await c.fetch(a.id)).parent_external_key).toBe('RN-NEW');
    expect((await c.fetch(a1.id)).parent_external_key).toBe('RN-A');
    // The old key is free and the new one taken.
    expect((await c.list(`${BASE}?external_key=RN-ROOT`)).total_count).toBe(0);
    expect((await c.list(`${BASE}?external_key=RN-NEW`)).total_count).toBe(1);
  });

  it('descendant_count_affected counts live descendants at every depth, whatever their windows', async () => {
    const { root, a, b, a1 } = await subtree('RC');
    await setWindow(t, a1.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    expect((await rename(root, { external_key: 'RC-1' })).json().descendant_count_affected).toBe(3);
    expect((await c.del(url(b))).statusCode).toBe(204);
    expect((await rename(root, { external_key: 'RC-2' })).json().descendant_count_affected).toBe(2);
    expect((await rename(a, { external_key: 'RC-A2' })).json().descendant_count_affected).toBe(1);
    expect((await rename(a1, { external_key: 'RC-A12' })).json().descendant_count_affected).toBe(0);
  });

  it('renaming to the current value is a no-op that keeps updated_at', async () => {
    const { root } = await subtree('NOOP');
    const res = await rename(root, { external_key: 'NOOP-ROOT' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: root, descendant_count_affected: 3 });
    expect(await c.fetch(root.id)).toEqual(root);
  });

  it('a key held by another live location is 409 conflict; matching is case-sensitive', async () => {
    const a = await c.create({ external_key: 'RK-A', name: 'a' });
    await c.create({ external_key: 'RK-B', name: 'b' });
    const error = expectConflict(await rename(a, { external_key: 'RK-B' }));
    expect(error.detail).toContain('RK-B');
    expect(await c.fetch(a.id)).toEqual(a);
    expect((await rename(a, { external_key: 'rk-b' })).json().data.external_key).toBe('rk-b');
  });

  it("a soft-deleted location's key can be taken by a rename", async () => {
    const gone = await c.create({ external_key: 'RK-GONE', name: 'gone' });
    expect((await c.del(url(gone))).statusCode).toBe(204);
    const l = await c.create({ name: 'l' });
    expect((await rename(l, { external_key: 'RK-GONE' })).statusCode).toBe(200);
  });

  it('the new external_key follows the external_key pattern and is required', async () => {
    const l = await c.create({ name: 'l' });
    expect(fieldCodes(await rename(l, { external_key: 'has space' }))).toEqual([
      ['external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await rename(l, { external_key: '' }))).toEqual([['external_key', 'too_short']]);
    expect(fieldCodes(await rename(l, { external_key: 'K'.repeat(256) }))).toEqual([
      ['external_key', 'too_long'],
    ]);
    expect(fieldCodes(await rename(l, { external_key: null }))).toEqual([['external_key', 'invalid_value']]);
    expect(fieldCodes(await rename(l, {}))).toEqual([['external_key', 'required']]);
    expect(fieldCodes(await rename(l, { external_key: 'OK', name: 'x' }))).toEqual([
      ['name', 'unknown_field'],
    ]);
    expect(await c.fetch(l.id)).toEqual(l);
  });

  it('a renamed-away auto key slot is reused by the next create', async () => {
    const own = await client(t);
    const first = await own.create({ name: 'first' });
    expect(first.external_key).toBe('LOC-0001');
    expect((await own.post(`${url(first)}/rename`, { external_key: 'NAMED' })).statusCode).toBe(200);
    expect((await own.create({ name: 'second' })).external_key).toBe('LOC-0001');
  });

  it('is 404 for a missing or soft-deleted location; a location outside its window can be renamed', async () => {
    expectNotFound(await rename({ id: 2147483647 }, { external_key: 'X' }));
    const gone = await c.create({ name: 'gone' });
    expect((await c.del(url(gone))).statusCode).toBe(204);
    expectNotFound(await rename(gone, { external_key: 'X' }));
    const future = await c.create({ name: 'future', valid_from: '2999-01-01T00:00:00Z' });
    expect((await rename(future, { external_key: 'FUTURE-KEY' })).statusCode).toBe(200);
  });

  it('validation runs before lookup: a bad body on a missing location is 400', async () => {
    expectValidationError(await rename({ id: 2147483647 }, { external_key: 'a b' }));
  });
});
