/**
 * Parents on POST and PATCH (API-SPEC "Location write rules", States and transitions,
 * Errors details 3): resolution, fk_not_found, ambiguous_fields, cycles, and concurrent
 * re-parents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import {
  BASE,
  type Client,
  client,
  expectConflict,
  fieldCodes,
  type LocationBody,
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
const MISSING = 2147483647;

async function patchOk(l: { id: number }, body: unknown): Promise<LocationBody> {
  const res = await c.patch(url(l), body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** A chain root > ... > leaf with the given keys. */
async function chain(...keys: string[]): Promise<LocationBody[]> {
  const out: LocationBody[] = [];
  for (const key of keys) {
    out.push(await c.create({ external_key: key, name: key, parent_id: out.at(-1)?.id ?? null }));
  }
  return out;
}

describe('parents on create', () => {
  it('parent_id places the location under the parent; parent_external_key on read names it', async () => {
    const parent = await c.create({ external_key: 'P-ID', name: 'parent' });
    const child = await c.create({ name: 'child', parent_id: parent.id });
    expect(child).toMatchObject({ parent_id: parent.id, parent_external_key: 'P-ID' });
  });

  it('parent_external_key places the location under the parent (case-sensitive)', async () => {
    const parent = await c.create({ external_key: 'P-KEY', name: 'parent' });
    await c.create({ external_key: 'p-key', name: 'look-alike' });
    const child = await c.create({ name: 'child', parent_external_key: 'P-KEY' });
    expect(child).toMatchObject({ parent_id: parent.id, parent_external_key: 'P-KEY' });
  });

  it('null in either form creates a root', async () => {
    expect((await c.create({ name: 'r1', parent_id: null })).parent_id).toBeNull();
    expect((await c.create({ name: 'r2', parent_external_key: null })).parent_id).toBeNull();
    expect((await c.create({ name: 'r3', parent_id: null, parent_external_key: null })).parent_id).toBeNull();
  });

  it('both forms naming the same parent are accepted and normalized to one', async () => {
    const parent = await c.create({ external_key: 'P-BOTH', name: 'parent' });
    const child = await c.create({ name: 'child', parent_id: parent.id, parent_external_key: 'P-BOTH' });
    expect(child).toMatchObject({ parent_id: parent.id, parent_external_key: 'P-BOTH' });
  });

  it('both forms naming different parents are ambiguous_fields, one entry per field', async () => {
    const a = await c.create({ external_key: 'P-AMB-A', name: 'a' });
    await c.create({ external_key: 'P-AMB-B', name: 'b' });
    const fields = expectValidationError(
      await c.post(BASE, { name: 'child', parent_id: a.id, parent_external_key: 'P-AMB-B' }),
    );
    expect(fields.map((f) => [f.field, f.code])).toEqual([
      ['parent_id', 'ambiguous_fields'],
      ['parent_external_key', 'ambiguous_fields'],
    ]);
  });

  it('null in one form and a parent in the other disagree: ambiguous_fields', async () => {
    const a = await c.create({ external_key: 'P-NULL', name: 'a' });
    expect(
      fieldCodes(await c.post(BASE, { name: 'x', parent_id: null, parent_external_key: 'P-NULL' })),
    ).toEqual([
      ['parent_id', 'ambiguous_fields'],
      ['parent_external_key', 'ambiguous_fields'],
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_id: a.id, parent_external_key: null }))).toEqual(
      [
        ['parent_id', 'ambiguous_fields'],
        ['parent_external_key', 'ambiguous_fields'],
      ],
    );
  });

  it('a parent that does not exist is fk_not_found, on either form', async () => {
    expect(expectValidationError(await c.post(BASE, { name: 'x', parent_id: MISSING }))).toEqual([
      { field: 'parent_id', code: 'fk_not_found', message: expect.any(String), params: { value: MISSING } },
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_external_key: 'NO-SUCH-PARENT' }))).toEqual([
      ['parent_external_key', 'fk_not_found'],
    ]);
  });

  it('each form is resolved first: an unresolvable side gets fk_not_found and then no ambiguous_fields', async () => {
    const a = await c.create({ external_key: 'P-RES', name: 'a' });
    expect(
      fieldCodes(await c.post(BASE, { name: 'x', parent_id: MISSING, parent_external_key: 'P-RES' })),
    ).toEqual([['parent_id', 'fk_not_found']]);
    expect(
      fieldCodes(await c.post(BASE, { name: 'x', parent_id: a.id, parent_external_key: 'NOPE-1' })),
    ).toEqual([['parent_external_key', 'fk_not_found']]);
    expect(
      fieldCodes(await c.post(BASE, { name: 'x', parent_id: MISSING, parent_external_key: 'NOPE-1' })),
    ).toEqual([
      ['parent_id', 'fk_not_found'],
      ['parent_external_key', 'fk_not_found'],
    ]);
    expect(
      fieldCodes(await c.post(BASE, { name: 'x', parent_id: null, parent_external_key: 'NOPE-1' })),
    ).toEqual([['parent_external_key', 'fk_not_found']]);
  });

  it('a soft-deleted parent does not exist (fk_not_found); one outside its validity window does', async () => {
    const gone = await c.create({ external_key: 'P-GONE', name: 'gone' });
    expect((await c.del(url(gone))).statusCode).toBe(204);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_id: gone.id }))).toEqual([
      ['parent_id', 'fk_not_found'],
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_external_key: 'P-GONE' }))).toEqual([
      ['parent_external_key', 'fk_not_found'],
    ]);
    const expired = await c.create({ external_key: 'P-EXPIRED', name: 'expired' });
    await setWindow(t, expired.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    const future = await c.create({
      external_key: 'P-FUTURE',
      name: 'future',
      valid_from: '2999-01-01T00:00:00Z',
    });
    expect((await c.create({ name: 'x', parent_external_key: 'P-EXPIRED' })).parent_id).toBe(expired.id);
    expect((await c.create({ name: 'x', parent_id: future.id })).parent_id).toBe(future.id);
  });

  it('parent_external_key follows the external_key pattern', async () => {
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_external_key: 'a b' }))).toEqual([
      ['parent_external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_external_key: '' }))).toEqual([
      ['parent_external_key', 'too_short'],
    ]);
    expect(fieldCodes(await c.post(BASE, { name: 'x', parent_id: '1' }))).toEqual([
      ['parent_id', 'invalid_value'],
    ]);
  });
});

describe('re-parenting with PATCH', () => {
  it('parent_id or parent_external_key re-parents; updated_at advances', async () => {
    const [a, b] = [
      await c.create({ external_key: 'M-A', name: 'a' }),
      await c.create({ external_key: 'M-B', name: 'b' }),
    ];
    const l = await c.create({ name: 'mover', parent_id: a.id });
    const moved = await patchOk(l, { parent_id: b.id });
    expect(moved).toMatchObject({ parent_id: b.id, parent_external_key: 'M-B' });
    expect(Date.parse(moved.updated_at)).toBeGreaterThan(Date.parse(l.updated_at));
    expect(await patchOk(l, { parent_external_key: 'M-A' })).toMatchObject({ parent_id: a.id });
    expect(await patchOk(l, { parent_id: b.id, parent_external_key: 'M-B' })).toMatchObject({
      parent_id: b.id,
    });
  });

  it('null detaches to root, in either form', async () => {
    const parent = await c.create({ name: 'p' });
    const l = await c.create({ name: 'l', parent_id: parent.id });
    expect(await patchOk(l, { parent_id: null })).toMatchObject({
      parent_id: null,
      parent_external_key: null,
    });
    await patchOk(l, { parent_id: parent.id });
    expect(await patchOk(l, { parent_external_key: null })).toMatchObject({ parent_id: null });
  });

  it('ambiguous_fields and fk_not_found apply on PATCH as on POST, and change nothing', async () => {
    const [a, b] = [
      await c.create({ external_key: 'PA-A', name: 'a' }),
      await c.create({ external_key: 'PA-B', name: 'b' }),
    ];
    const l = await c.create({ name: 'l' });
    expect(fieldCodes(await c.patch(url(l), { parent_id: a.id, parent_external_key: 'PA-B' }))).toEqual([
      ['parent_id', 'ambiguous_fields'],
      ['parent_external_key', 'ambiguous_fields'],
    ]);
    expect(fieldCodes(await c.patch(url(l), { parent_id: MISSING, parent_external_key: 'PA-B' }))).toEqual([
      ['parent_id', 'fk_not_found'],
    ]);
    expect(fieldCodes(await c.patch(url(l), { parent_external_key: 'PA-NONE' }))).toEqual([
      ['parent_external_key', 'fk_not_found'],
    ]);
    expect(await c.fetch(l.id)).toEqual(l);
    expect(b.parent_id).toBeNull();
  });

  it('a parent_id of the location itself is 409 conflict naming the cycle', async () => {
    const l = await c.create({ external_key: 'SELF-1', name: 'self' });
    const error = expectConflict(await c.patch(url(l), { parent_id: l.id }));
    expect(error.detail).toBe('moving SELF-1 under SELF-1 would create a cycle: SELF-1 → SELF-1');
    expectConflict(await c.patch(url(l), { parent_external_key: 'SELF-1' }), /cycle/);
    expect(await c.fetch(l.id)).toEqual(l);
  });

  it('a parent that is a descendant, at any depth, is 409 conflict whose detail names the cycle', async () => {
    const [top, mid, low, leaf] = await chain('CY-TOP', 'CY-MID', 'CY-LOW', 'CY-LEAF');
    const deep = expectConflict(await c.patch(url(top!), { parent_id: leaf!.id }));
    expect(deep.detail).toBe(
      'moving CY-TOP under CY-LEAF would create a cycle: CY-LEAF → CY-LOW → CY-MID → CY-TOP',
    );
    const direct = expectConflict(await c.patch(url(mid!), { parent_external_key: 'CY-LOW' }));
    expect(direct.detail).toBe('moving CY-MID under CY-LOW would create a cycle: CY-LOW → CY-MID');
    expect(await c.fetch(top!.id)).toEqual(top);
    // Moving down a different branch is fine: the leaf goes under the top.
    expect((await patchOk(leaf!, { parent_id: top!.id })).parent_id).toBe(top!.id);
    expect(low!.parent_id).toBe(mid!.id);
  });

  it('setting the current parent again is accepted (no cycle check needed)', async () => {
    const [p, l] = await chain('SAME-P', 'SAME-L');
    expect((await patchOk(l!, { parent_id: p!.id })).parent_id).toBe(p!.id);
  });

  it('concurrent re-parents cannot build a cycle: of two opposite moves one is refused', async () => {
    for (let round = 0; round < 8; round++) {
      const x = await c.create({ name: `x${round}` });
      const y = await c.create({ name: `y${round}` });
      const [first, second] = await Promise.all([
        c.patch(url(x), { parent_id: y.id }),
        c.patch(url(y), { parent_id: x.id }),
      ]);
      expect([first.statusCode, second.statusCode].sort(), `round ${round}`).toEqual([200, 409]);
    }
  });

  it('concurrent moves around a ring of three leave the tree acyclic', async () => {
    for (let round = 0; round < 5; round++) {
      const ring: LocationBody[] = [];
      for (let i = 0; i < 3; i++) ring.push(await c.create({ name: `ring${round}-${i}` }));
      const results = await Promise.all(
        ring.map((l, i) => c.patch(url(l), { parent_id: ring[(i + 1) % 3]!.id })),
      );
      const codes = results.map((r) => r.statusCode).sort();
      expect(codes).toEqual([200, 200, 409]);
      // Walking up from every member reaches a root.
      const { rows } = await t.database.db.pool.query<{ id: number; parent_id: number | null }>(
        'SELECT id, parent_id FROM locations WHERE id = ANY($1)',
        [ring.map((l) => l.id)],
      );
      const parent = new Map(rows.map((r) => [r.id, r.parent_id]));
      for (const l of ring) {
        let at: number | null | undefined = l.id;
        for (let steps = 0; at != null; steps++) {
          expect(steps).toBeLessThan(4);
          at = parent.get(at);
        }
      }
    }
  });
});
