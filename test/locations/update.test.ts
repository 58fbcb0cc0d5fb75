/**
 * PATCH /api/v1/locations/{location_id} (API-SPEC "Location write rules", the PATCH rules
 * they share with assets, States and transitions, Liveness axes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import { BASE, type Client, client, expectNotFound, fieldCodes, type LocationBody } from './helpers.js';

let t: TestApp;
let c: Client;
beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
});
afterAll(() => t.close());

const url = (l: { id: number }) => `${BASE}/${l.id}`;

async function patchOk(l: { id: number }, body: unknown): Promise<LocationBody> {
  const res = await c.patch(url(l), body);
  expect(res.statusCode, res.body).toBe(200);
  expect(Object.keys(res.json())).toEqual(['data']);
  return res.json().data;
}

const later = (a: string, b: string) => Date.parse(a) > Date.parse(b);

describe('PATCH /api/v1/locations/{location_id}', () => {
  it('changes only the fields present and returns data: <Location>', async () => {
    const before = await c.create({ name: 'Before', description: 'keep me', is_active: true });
    const after = await patchOk(before, { name: 'After' });
    expect(after).toEqual({ ...before, name: 'After', updated_at: after.updated_at });
    expect(await c.fetch(before.id)).toEqual(after);
  });

  it('null clears a nullable field (description, valid_to)', async () => {
    const l = await c.create({ name: 'x', description: 'text', valid_to: '2999-01-01T00:00:00Z' });
    const after = await patchOk(l, { description: null, valid_to: null });
    expect(after.description).toBeNull();
    expect(after.valid_to).toBeNull();
  });

  it('{} is accepted and advances updated_at', async () => {
    const l = await c.create({ name: 'x' });
    const after = await patchOk(l, {});
    expect(later(after.updated_at, l.updated_at)).toBe(true);
    expect({ ...after, updated_at: l.updated_at }).toEqual(l);
  });

  it('every accepted PATCH advances updated_at strictly, even several within one millisecond', async () => {
    const l = await c.create({ name: 'x' });
    let last = l.updated_at;
    for (let i = 0; i < 5; i++) {
      const after = await patchOk(l, { name: 'x' });
      expect(later(after.updated_at, last), `${after.updated_at} > ${last}`).toBe(true);
      last = after.updated_at;
    }
  });

  it('a rejected PATCH changes nothing and does not advance updated_at', async () => {
    const l = await c.create({ name: 'x', description: 'd' });
    expectValidationError(await c.patch(url(l), { name: 'new', is_active: null }));
    expectValidationError(await c.patch(url(l), { name: 'new', id: l.id + 1000 }));
    expect(await c.fetch(l.id)).toEqual(l);
  });

  it('is_active true or false is changed (states table), null is invalid_value', async () => {
    const l = await c.create({ name: 'x' });
    expect((await patchOk(l, { is_active: false })).is_active).toBe(false);
    expect((await patchOk(l, { is_active: true })).is_active).toBe(true);
    expect(fieldCodes(await c.patch(url(l), { is_active: null }))).toEqual([['is_active', 'invalid_value']]);
  });

  it('valid_from null is invalid_value', async () => {
    const l = await c.create({ name: 'x' });
    expect(fieldCodes(await c.patch(url(l), { valid_from: null }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
  });

  it('changing the window hides or shows the row on lists by the temporal rule', async () => {
    const l = await c.create({ name: 'x', external_key: 'WINDOW-1' });
    const listed = async () => (await c.list(`${BASE}?external_key=WINDOW-1`)).total_count;
    expect(await listed()).toBe(1);
    await patchOk(l, { valid_from: '2999-01-01T00:00:00Z' });
    expect(await listed()).toBe(0);
    await patchOk(l, { valid_from: '2000-01-01T00:00:00Z', valid_to: '2001-01-01T00:00:00Z' });
    expect(await listed()).toBe(0);
    await patchOk(l, { valid_to: null });
    expect(await listed()).toBe(1);
  });

  it('valid_to less than or equal to valid_from after merging is invalid_value on valid_to', async () => {
    const l = await c.create({
      name: 'x',
      valid_from: '2020-01-01T00:00:00Z',
      valid_to: '2030-01-01T00:00:00Z',
    });
    // The new valid_to against the stored valid_from.
    expect(fieldCodes(await c.patch(url(l), { valid_to: '2020-01-01T00:00:00Z' }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    // The new valid_from against the stored valid_to: still reported on valid_to.
    expect(fieldCodes(await c.patch(url(l), { valid_from: '2030-01-01T00:00:00Z' }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    // Both new.
    expect(
      fieldCodes(
        await c.patch(url(l), { valid_from: '2040-01-01T00:00:00Z', valid_to: '2039-01-01T00:00:00Z' }),
      ),
    ).toEqual([['valid_to', 'invalid_value']]);
    // Moving both together is fine.
    const moved = await patchOk(l, { valid_from: '2040-01-01T00:00:00Z', valid_to: '2041-01-01T00:00:00Z' });
    expect([moved.valid_from, moved.valid_to]).toEqual([
      '2040-01-01T00:00:00.000Z',
      '2041-01-01T00:00:00.000Z',
    ]);
  });

  it('name and description follow the field rules on PATCH too', async () => {
    const l = await c.create({ name: 'x' });
    expect(fieldCodes(await c.patch(url(l), { name: '' }))).toEqual([['name', 'too_short']]);
    expect(fieldCodes(await c.patch(url(l), { name: 'a\u0000' }))).toEqual([['name', 'invalid_value']]);
    expect(fieldCodes(await c.patch(url(l), { name: ' padded' }))).toEqual([['name', 'invalid_value']]);
    expect(fieldCodes(await c.patch(url(l), { name: null }))).toEqual([['name', 'invalid_value']]);
    expect(fieldCodes(await c.patch(url(l), { description: '' }))).toEqual([['description', 'too_short']]);
    expect(fieldCodes(await c.patch(url(l), { description: 'x\u0001' }))).toEqual([
      ['description', 'invalid_value'],
    ]);
  });

  it('metadata on a location PATCH is unknown_field', async () => {
    const l = await c.create({ name: 'x' });
    expect(fieldCodes(await c.patch(url(l), { metadata: { a: 1 } }))).toEqual([
      ['metadata', 'unknown_field'],
    ]);
  });

  it('the whole read shape echoed back verbatim is accepted; read-only fields are dropped and updated_at advances', async () => {
    const parent = await c.create({ name: 'parent' });
    const l = await c.create({
      name: 'echo',
      parent_id: parent.id,
      tags: [
        { tag_type: 'rfid', value: 'ECHO-1' },
        { tag_type: 'ble', value: 'ECHO-2' },
      ],
    });
    const after = await patchOk(l, l);
    expect(later(after.updated_at, l.updated_at)).toBe(true);
    expect({ ...after, updated_at: l.updated_at }).toEqual(l);
  });

  it('datetime read-only fields are matched by instant, not text', async () => {
    const l = await c.create({ name: 'x' });
    const shifted = (iso: string) => {
      // The same instant at +05:30 with nine fractional digits.
      const d = new Date(Date.parse(iso) + 5.5 * 3600_000);
      return `${d.toISOString().slice(0, 23)}000999+05:30`;
    };
    const after = await patchOk(l, {
      created_at: shifted(l.created_at),
      updated_at: shifted(l.updated_at),
      deleted_at: null,
    });
    expect(later(after.updated_at, l.updated_at)).toBe(true);
  });

  it.each([
    ['id', (l: LocationBody) => l.id + 1],
    ['created_at', (l: LocationBody) => new Date(Date.parse(l.created_at) - 1).toISOString()],
    ['deleted_at', () => '2024-01-01T00:00:00Z'],
  ])('%s differing from the current value is read_only', async (field, value) => {
    const l = await c.create({ name: 'x' });
    expect(fieldCodes(await c.patch(url(l), { [field]: value(l) }))).toEqual([[field, 'read_only']]);
    expect(await c.fetch(l.id)).toEqual(l);
  });

  it('a stale updated_at is read_only with fields[0].message naming the mismatch; omitting it opts out', async () => {
    const l = await c.create({ name: 'x' });
    const fresh = await patchOk(l, { name: 'y' });
    const fields = expectValidationError(await c.patch(url(l), { updated_at: l.updated_at, name: 'z' }));
    expect(fields).toHaveLength(1);
    expect(fields[0]).toMatchObject({ field: 'updated_at', code: 'read_only' });
    expect(fields[0]!.message).toContain(l.updated_at);
    expect(fields[0]!.message).toContain(fresh.updated_at);
    expect((await patchOk(l, { updated_at: fresh.updated_at, name: 'z' })).name).toBe('z');
    expect((await patchOk(l, { name: 'w' })).name).toBe('w');
  });

  it('external_key differing is invalid_context naming POST /api/v1/locations/{location_id}/rename and its body', async () => {
    const l = await c.create({ name: 'x', external_key: 'ECHO-KEY' });
    const fields = expectValidationError(await c.patch(url(l), { external_key: 'OTHER-KEY' }));
    expect(fields).toHaveLength(1);
    expect(fields[0]).toMatchObject({ field: 'external_key', code: 'invalid_context' });
    expect(fields[0]!.message).toContain('POST /api/v1/locations/{location_id}/rename');
    expect(fields[0]!.message).toContain('{"external_key": "<new key>"}');
    expect(fields[0]!.params).toMatchObject({ endpoint: `POST /api/v1/locations/${l.id}/rename` });
    // Matching is case-sensitive, and the same key is dropped silently.
    expect(fieldCodes(await c.patch(url(l), { external_key: 'echo-key' }))).toEqual([
      ['external_key', 'invalid_context'],
    ]);
    expect((await patchOk(l, { external_key: 'ECHO-KEY' })).external_key).toBe('ECHO-KEY');
  });

  it('tags differing are invalid_context naming the tags sub-resource; compared as a set on full content', async () => {
    const l = await c.create({
      name: 'x',
      tags: [
        { tag_type: 'rfid', value: 'SET-1' },
        { tag_type: 'barcode', value: 'SET-2' },
      ],
    });
    const [a, b] = l.tags as [LocationBody['tags'][0], LocationBody['tags'][0]];
    // Order is not significant; without ids the tags compare on type and value.
    await patchOk(l, { tags: [b, a] });
    await patchOk(l, {
      tags: [
        { tag_type: b.tag_type, value: b.value },
        { tag_type: a.tag_type, value: a.value },
      ],
    });
    for (const tags of [
      [a],
      [a, b, { tag_type: 'ble', value: 'SET-3' }],
      [a, { ...b, value: 'SET-9' }],
      [],
      null,
    ]) {
      const fields = expectValidationError(await c.patch(url(l), { tags }));
      expect(fields, JSON.stringify(tags)).toHaveLength(1);
      expect(fields[0]).toMatchObject({ field: 'tags', code: 'invalid_context' });
      expect(fields[0]!.message).toContain('/api/v1/locations/{location_id}/tags');
    }
    expect(fieldCodes(await c.patch(url(l), { tags: [{ ...a, id: a.id + 100 }, b] }))).toEqual([
      ['tags', 'invalid_context'],
    ]);
    const bare = await c.create({ name: 'no tags' });
    await patchOk(bare, { tags: [] });
  });

  it('several differing read-only fields are reported together, in one 400', async () => {
    const l = await c.create({ name: 'x' });
    const fields = expectValidationError(
      await c.patch(url(l), {
        id: l.id + 1,
        created_at: '2001-01-01T00:00:00Z',
        external_key: 'NEW',
        tags: [],
      }),
    );
    expect(fields.map((f) => [f.field, f.code])).toEqual([
      ['id', 'read_only'],
      ['created_at', 'read_only'],
      ['external_key', 'invalid_context'],
    ]);
  });

  it('an undeclared body key is unknown_field', async () => {
    const l = await c.create({ name: 'x' });
    expect(fieldCodes(await c.patch(url(l), { color: 'red' }))).toEqual([['color', 'unknown_field']]);
  });

  it('a body that is the literal JSON null is bad_request saying the body must be a JSON object', async () => {
    const l = await c.create({ name: 'x' });
    const error = expectErrorEnvelope(await c.patch(url(l), 'null'), { status: 400, type: 'bad_request' });
    expect(error.detail).toMatch(/JSON object/);
  });

  it('is 404 for a missing or soft-deleted location', async () => {
    expectNotFound(await c.patch(`${BASE}/2147483647`, { name: 'x' }));
    const l = await c.create({ name: 'x' });
    expect((await c.del(url(l))).statusCode).toBe(204);
    expectNotFound(await c.patch(url(l), { name: 'x' }));
    expectNotFound(await c.patch(url(l), {}));
  });
});
