/** PATCH /api/v1/assets/{asset_id}: PATCH asset rules 1-7 and the validity window. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';
import {
  type AssetApi,
  type AssetsFixture,
  assetsFixture,
  fieldCodes,
  insertLocation,
  ms,
  placeAsset,
  unique,
} from './helpers.js';

const BASE = '/api/v1/assets';

/** `iso` written in the offset +05:30, with nine fractional digits: the same instant. */
function inOtherOffset(iso: string): string {
  const shifted = new Date(Date.parse(iso) + 330 * 60_000).toISOString();
  return `${shifted.slice(0, 23)}999999+05:30`;
}

describe('PATCH /api/v1/assets/{asset_id}', () => {
  let f: AssetsFixture;
  let api: AssetApi;
  beforeAll(async () => {
    f = await assetsFixture();
    api = f.api;
  });
  afterAll(() => f.t.close());

  const patch = (a: Asset, body: unknown) => api.patch(`${BASE}/${a.id}`, body);
  const current = async (a: Asset): Promise<Asset> => (await api.get(`${BASE}/${a.id}`)).json().data;

  async function accepted(a: Asset, body: unknown): Promise<Asset> {
    const res = await patch(a, body);
    expect(res.statusCode, res.body).toBe(200);
    const { data } = res.json();
    expect(await current(a)).toEqual(data);
    return data;
  }

  /** A rejected PATCH changes nothing, updated_at included (rule 2). */
  async function expectUnchanged(a: Asset): Promise<void> {
    expect(await current(a)).toEqual(a);
  }

  it('PATCH rule 1: only the fields present change', async () => {
    const a = await api.create({ name: 'Before', description: 'kept', metadata: { m: 1 }, is_active: true });
    const b = await accepted(a, { name: 'After' });
    expect(b).toEqual({ ...a, name: 'After', updated_at: b.updated_at });
    const c = await accepted(b, { is_active: false, valid_from: '2021-01-01T00:00:00Z' });
    expect(c).toEqual({
      ...b,
      is_active: false,
      valid_from: '2021-01-01T00:00:00.000Z',
      updated_at: c.updated_at,
    });
  });

  it('PATCH rule 1: a PATCH of writable fields alone answers the whole asset: its tags and current location', async () => {
    // Nothing to compare with the current values: the update is not preceded by a read.
    const a0 = await api.create({
      tags: [
        { tag_type: 'rfid', value: unique('E') },
        { tag_type: 'ble', value: unique('B') },
      ],
    });
    const key = unique('LOC');
    const locationId = await insertLocation(f.t, f.org.id, key);
    await placeAsset(f.t, a0.id, locationId);
    const a = await current(a0);
    const b = await accepted(a, { description: 'moved', metadata: { m: 2 } });
    expect(b).toEqual({ ...a, description: 'moved', metadata: { m: 2 }, updated_at: b.updated_at });
    expect(b).toMatchObject({ location_id: locationId, location_external_key: key, tags: a0.tags });
    expect(ms(b.updated_at)).toBeGreaterThan(ms(a.updated_at));
  });

  it('PATCH of writable fields alone: 404 for an unknown or deleted asset, nothing changed', async () => {
    const a = await api.create({ name: 'Gone' });
    expect((await api.delete(`${BASE}/${a.id}`)).statusCode).toBe(204);
    for (const id of [a.id, a.id + 1_000_000]) {
      const res = await api.patch(`${BASE}/${id}`, { name: 'Back' });
      expect(res.statusCode, res.body).toBe(404);
      expectErrorEnvelope(res, { status: 404 });
    }
  });

  it('PATCH rule 1: null clears description and valid_to', async () => {
    const a = await api.create({ description: 'temporary', valid_to: '2999-01-01T00:00:00Z' });
    const b = await accepted(a, { description: null, valid_to: null });
    expect([b.description, b.valid_to]).toEqual([null, null]);
  });

  it('PATCH rule 1: {} is accepted and changes no field', async () => {
    const a = await api.create();
    const b = await accepted(a, {});
    expect(b).toEqual({ ...a, updated_at: b.updated_at });
  });

  it('PATCH rule 2: {} advances updated_at', async () => {
    const a = await api.create();
    const b = await accepted(a, {});
    const c = await accepted(b, {});
    expect(ms(b.updated_at)).toBeGreaterThan(ms(a.updated_at));
    expect(ms(c.updated_at)).toBeGreaterThan(ms(b.updated_at));
  });

  it('PATCH rule 2: a verbatim echo of the whole asset is accepted and advances updated_at', async () => {
    const key = unique('DOCK');
    const a0 = await api.create({
      tags: [{ tag_type: 'rfid', value: unique('E') }],
      metadata: { a: { b: [1] } },
    });
    await placeAsset(f.t, a0.id, await insertLocation(f.t, f.org.id, key));
    const a = await current(a0);
    const b = await accepted(a, a);
    expect(b).toEqual({ ...a, updated_at: b.updated_at });
    expect(ms(b.updated_at)).toBeGreaterThan(ms(a.updated_at));
  });

  it('PATCH rule 2: rapid accepted PATCHes each advance updated_at strictly', async () => {
    let a = await api.create();
    const seen = [a.updated_at];
    for (let i = 0; i < 10; i++) {
      a = await accepted(a, { name: `N${i}` });
      seen.push(a.updated_at);
    }
    for (let i = 1; i < seen.length; i++) expect(ms(seen[i]!)).toBeGreaterThan(ms(seen[i - 1]!));
  });

  it('PATCH rule 2: rejected PATCHes do not advance updated_at', async () => {
    const a = await api.create();
    expectValidationError(await patch(a, { name: '' }));
    expectValidationError(await patch(a, { id: a.id + 1 }));
    expectValidationError(
      await patch(a, { valid_to: '2000-01-01T00:00:00Z', valid_from: '2001-01-01T00:00:00Z' }),
    );
    expectValidationError(await patch(a, { updated_at: '2001-01-01T00:00:00Z', name: 'x' }));
    await expectUnchanged(a);
  });

  it('PATCH rule 3: metadata replaces the whole object; no merging inside it', async () => {
    const a = await api.create({ metadata: { keep: 1, nested: { x: 1, y: 2 } } });
    const b = await accepted(a, { metadata: { nested: { y: 3 } } });
    expect(b.metadata).toEqual({ nested: { y: 3 } });
    const c = await accepted(b, { metadata: {} });
    expect(c.metadata).toEqual({});
  });

  it('PATCH rule 4: id, created_at, deleted_at, location_id, location_external_key equal to the current values are dropped', async () => {
    const key = unique('DOCK');
    const a0 = await api.create();
    const locationId = await insertLocation(f.t, f.org.id, key);
    await placeAsset(f.t, a0.id, locationId);
    const a = await current(a0);
    const b = await accepted(a, {
      id: a.id,
      created_at: a.created_at,
      deleted_at: null,
      location_id: locationId,
      location_external_key: key,
      name: 'Echoed',
    });
    expect(b).toMatchObject({ id: a.id, created_at: a.created_at, location_id: locationId, name: 'Echoed' });
  });

  it.each([
    ['id', (a: Asset) => a.id + 1],
    ['created_at', () => '2001-02-03T04:05:06.007Z'],
    ['deleted_at', () => '2001-02-03T04:05:06.007Z'],
    ['location_id', () => 7],
    ['location_external_key', () => 'ELSEWHERE'],
    ['location_external_key', () => ''],
  ])('PATCH rule 4: a differing %s is read_only', async (field, value) => {
    const a = await api.create();
    const fields = expectValidationError(await patch(a, { [field]: value(a), name: 'ignored' }));
    expect(fields).toEqual([
      { field, code: 'read_only', message: expect.any(String), params: expect.any(Object) },
    ]);
    await expectUnchanged(a);
  });

  it('PATCH rule 4: a differing external_key is invalid_context naming POST /api/v1/assets/{asset_id}/rename and its body', async () => {
    const a = await api.create();
    const [field] = expectValidationError(await patch(a, { external_key: unique('NEW') }));
    expect(field).toMatchObject({ field: 'external_key', code: 'invalid_context' });
    expect(field!.message).toContain('POST /api/v1/assets/{asset_id}/rename');
    expect(field!.message).toContain('{"external_key": "<new key>"}');
    expect(field!.params).toMatchObject({ path: `/api/v1/assets/${a.id}/rename` });
    // The current key echoed is dropped.
    expect((await accepted(a, { external_key: a.external_key })).external_key).toBe(a.external_key);
  });

  it('PATCH rule 4: differing tags are invalid_context naming the tags sub-resource', async () => {
    const a = await api.create({ tags: [{ tag_type: 'rfid', value: unique('T') }] });
    for (const tags of [
      [],
      [...a.tags, { tag_type: 'ble', value: 'extra' }],
      [{ ...a.tags[0]!, value: 'other' }],
    ]) {
      const [field] = expectValidationError(await patch(a, { tags }));
      expect(field).toMatchObject({ field: 'tags', code: 'invalid_context' });
      expect(field!.message).toContain('POST /api/v1/assets/{asset_id}/tags');
      expect(field!.message).toContain('DELETE /api/v1/assets/{asset_id}/tags/{tag_id}');
    }
    await expectUnchanged(a);
  });

  it('PATCH rule 4: tags compare as a set on full content: another order is accepted, with or without ids', async () => {
    const a = await api.create({
      tags: [
        { tag_type: 'rfid', value: unique('A') },
        { tag_type: 'ble', value: unique('B') },
        { tag_type: 'barcode', value: unique('C') },
      ],
    });
    const reversed = [...a.tags].reverse();
    await accepted(a, { tags: reversed });
    await accepted(a, { tags: reversed.map(({ tag_type, value }) => ({ tag_type, value })) });
    // A wrong id on an otherwise equal tag is a difference.
    const wrongId = reversed.map((t, i) => (i === 0 ? { ...t, id: t.id + 1000 } : t));
    expect(fieldCodes(await patch(a, { tags: wrongId }))).toEqual([['tags', 'invalid_context']]);
    // Also where another tag of the echo leaves its id out (the ids are not then ignored).
    const [first, second, third] = reversed;
    const mixed = [
      { ...first!, id: first!.id + 1000 },
      { tag_type: second!.tag_type, value: second!.value },
      third!,
    ];
    expect(fieldCodes(await patch(a, { tags: mixed }))).toEqual([['tags', 'invalid_context']]);
    // A set: a tag listed twice is the one tag; a missing one is still a difference.
    await accepted(a, { tags: [...reversed, reversed[0]!] });
    expect(fieldCodes(await patch(a, { tags: [reversed[0]!, reversed[0]!, reversed[1]!] }))).toEqual([
      ['tags', 'invalid_context'],
    ]);
  });

  it('PATCH rule 4: every differing read-only field is listed, one entry each', async () => {
    const a = await api.create();
    expect(
      fieldCodes(
        await patch(a, { id: a.id + 1, created_at: '2001-01-01T00:00:00Z', external_key: 'X', tags: [] }),
      ),
    ).toEqual([
      ['id', 'read_only'],
      ['created_at', 'read_only'],
      ['external_key', 'invalid_context'],
    ]);
  });

  it('PATCH rule 5: datetime read-only fields match by instant: another offset and more fractional digits are accepted', async () => {
    const a = await api.create({ valid_from: '2022-02-02T02:02:02.002Z' });
    const echo = {
      created_at: inOtherOffset(a.created_at),
      updated_at: inOtherOffset(a.updated_at),
      valid_from: inOtherOffset(a.valid_from),
    };
    expect(echo.created_at).toMatch(/\+05:30$/);
    expect(Date.parse(echo.created_at.replace(/(\.\d{3})\d+/, '$1'))).toBe(ms(a.created_at));
    const b = await accepted(a, echo);
    expect(b.valid_from).toBe(a.valid_from);
  });

  it('PATCH rule 6: a stale updated_at is read_only and fields[0].message names the mismatch', async () => {
    const a = await api.create();
    const b = await accepted(a, { name: 'Moved on' });
    const res = await patch(a, { updated_at: a.updated_at, name: 'Lost update' });
    const fields = expectValidationError(res);
    expect(fields[0]).toMatchObject({ field: 'updated_at', code: 'read_only' });
    expect(fields[0]!.message).toContain('mismatch');
    expect(fields[0]!.message).toContain(a.updated_at);
    expect(fields[0]!.message).toContain(b.updated_at);
    await expectUnchanged(b);
    // fields[0] also when another read-only field differs.
    const both = expectValidationError(await patch(b, { id: b.id + 1, updated_at: a.updated_at }));
    expect(both.map((f) => [f.field, f.code])).toEqual([
      ['updated_at', 'read_only'],
      ['id', 'read_only'],
    ]);
    expect(both[0]!.message).toContain('mismatch');
  });

  it('PATCH rule 6: the current updated_at passes, and omitting updated_at opts out of lost-update detection', async () => {
    const a = await api.create();
    const b = await accepted(a, { updated_at: a.updated_at, name: 'Checked' });
    const c = await accepted(b, { name: 'Unchecked' });
    expect(c.name).toBe('Unchecked');
  });

  it.each([['valid_from'], ['is_active'], ['metadata']])(
    'PATCH rule 7: %s rejects null with invalid_value',
    async (field) => {
      const a = await api.create();
      const fields = expectValidationError(await patch(a, { [field]: null }));
      expect(fields).toEqual([
        {
          field,
          code: 'invalid_value',
          message: expect.any(String),
          params: expect.objectContaining({ received_type: 'null' }),
        },
      ]);
      await expectUnchanged(a);
    },
  );

  it('name rejects null (not nullable); description accepts it', async () => {
    const a = await api.create({ description: 'x' });
    expect(fieldCodes(await patch(a, { name: null }))).toEqual([['name', 'invalid_value']]);
    expect((await accepted(a, { description: null })).description).toBeNull();
  });

  it('valid_to <= valid_from after merging the patch with the current values is invalid_value on valid_to', async () => {
    const a = await api.create({ valid_from: '2020-01-01T00:00:00Z', valid_to: '2030-01-01T00:00:00Z' });
    expect(fieldCodes(await patch(a, { valid_to: '2020-01-01T00:00:00Z' }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    expect(fieldCodes(await patch(a, { valid_from: '2030-01-01T00:00:00Z' }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    expect(fieldCodes(await patch(a, { valid_from: '2031-01-01T00:00:00Z' }))).toEqual([
      ['valid_to', 'invalid_value'],
    ]);
    await expectUnchanged(a);
    const b = await accepted(a, {
      valid_from: '2031-01-01T00:00:00Z',
      valid_to: '2032-01-01T00:00:00+01:00',
    });
    expect([b.valid_from, b.valid_to]).toEqual(['2031-01-01T00:00:00.000Z', '2031-12-31T23:00:00.000Z']);
    // Opening the window again leaves valid_from free to move.
    const c = await accepted(b, { valid_to: null, valid_from: '2040-01-01T00:00:00Z' });
    expect(c.valid_to).toBeNull();
  });

  it('field rules are those of create: name, description, metadata, timestamps', async () => {
    const a = await api.create();
    expect(fieldCodes(await patch(a, { name: ' padded' }))).toEqual([['name', 'invalid_value']]);
    expect(fieldCodes(await patch(a, { description: '' }))).toEqual([['description', 'too_short']]);
    expect(fieldCodes(await patch(a, { metadata: { a: 'x'.repeat(65529) } }))).toEqual([
      ['metadata', 'too_long'],
    ]);
    expect(fieldCodes(await patch(a, { metadata: [] }))).toEqual([['metadata', 'invalid_value']]);
    expect(fieldCodes(await patch(a, { valid_from: '1970-01-01T00:00:00Z' }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
    expect(fieldCodes(await patch(a, { valid_from: '2024-01-01' }))).toEqual([
      ['valid_from', 'invalid_value'],
    ]);
    expect(fieldCodes(await patch(a, { is_active: 'yes' }))).toEqual([['is_active', 'invalid_value']]);
    expect(fieldCodes(await patch(a, { colour: 'red' }))).toEqual([['colour', 'unknown_field']]);
    expect(fieldCodes(await patch(a, { tag_values: 'x' }))).toEqual([['tag_values', 'unknown_field']]);
    await expectUnchanged(a);
  });

  it('an id echo above the int32 ceiling is too_large; the literal null body is bad_request', async () => {
    const a = await api.create();
    expect(expectValidationError(await patch(a, { id: 2147483648 }))).toEqual([
      { field: 'id', code: 'too_large', message: expect.any(String), params: { max: 2147483647 } },
    ]);
    const res = await f.t.app.inject({
      method: 'PATCH',
      url: `${BASE}/${a.id}`,
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/merge-patch+json' },
      payload: 'null',
    });
    expectErrorEnvelope(res, { status: 400, type: 'bad_request' });
  });

  it('PATCH of an asset that does not exist is 404, also with an empty body', async () => {
    expectErrorEnvelope(await api.patch(`${BASE}/2147483647`, {}), { status: 404, type: 'not_found' });
  });
});
