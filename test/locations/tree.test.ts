/**
 * The tree sub-resource lists (API-SPEC Locations): ancestors, children, descendants,
 * their orders, paging, the refused `sort`, and which rows they include.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import {
  BASE,
  type Client,
  client,
  expectNotFound,
  fieldCodes,
  keysOf,
  type LocationBody,
  setWindow,
} from './helpers.js';

let t: TestApp;
let c: Client;
/** Keyed by external_key. */
const n: Record<string, LocationBody> = {};

/**
 * World
 * └─ Campus
 *    ├─ a-WING "Yard"       (created before A-wing: same lowercased key, smaller id)
 *    ├─ A-wing "Yard"
 *    │  └─ a-Wing-1 "Room"
 *    │     └─ Z "Closet"
 *    ├─ b-Hall "Zeta"
 *    │  ├─ B-2 "mezzanine"
 *    │  └─ b-10 "annex"
 *    ├─ B-HALL-2 "Hall 2"   (its lowercased key extends b-hall's: comes after b-Hall's subtree)
 *    └─ c "alpha"
 */
const TREE: [string, string, string | null][] = [
  ['World', 'World', null],
  ['Campus', 'Campus', 'World'],
  ['c', 'alpha', 'Campus'],
  ['b-Hall', 'Zeta', 'Campus'],
  ['B-2', 'mezzanine', 'b-Hall'],
  ['a-WING', 'Yard', 'Campus'],
  ['A-wing', 'Yard', 'Campus'],
  ['B-HALL-2', 'Hall 2', 'Campus'],
  ['a-Wing-1', 'Room', 'A-wing'],
  ['b-10', 'annex', 'b-Hall'],
  ['Z', 'Closet', 'a-Wing-1'],
];

beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
  for (const [key, name, parent] of TREE) {
    n[key] = await c.create({ external_key: key, name, ...(parent ? { parent_id: n[parent]!.id } : {}) });
  }
});
afterAll(() => t.close());

const tree = (key: string, kind: string, query = '') => c.list(`${BASE}/${n[key]!.id}/${kind}${query}`);

describe('GET /api/v1/locations/{location_id}/descendants', () => {
  it('is depth-first tree order, each level by lowercased external_key, id breaking ties', async () => {
    const page = await tree('Campus', 'descendants');
    expect(keysOf(page.data)).toEqual([
      'a-WING',
      'A-wing',
      'a-Wing-1',
      'Z',
      'b-Hall',
      'b-10',
      'B-2',
      'B-HALL-2',
      'c',
    ]);
    expect(page).toMatchObject({ limit: 50, offset: 0, total_count: 9 });
    expect(page.data[0]).toEqual(n['a-WING']);
  });

  it('covers every depth below the location, and nothing else', async () => {
    expect(keysOf((await tree('World', 'descendants')).data)).toEqual([
      'Campus',
      'a-WING',
      'A-wing',
      'a-Wing-1',
      'Z',
      'b-Hall',
      'b-10',
      'B-2',
      'B-HALL-2',
      'c',
    ]);
    expect(keysOf((await tree('b-Hall', 'descendants')).data)).toEqual(['b-10', 'B-2']);
    expect(await tree('Z', 'descendants')).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
  });
});

describe('GET /api/v1/locations/{location_id}/children', () => {
  it('lists direct children by name ascending, id breaking ties', async () => {
    const page = await tree('Campus', 'children');
    expect(keysOf(page.data)).toEqual(['B-HALL-2', 'a-WING', 'A-wing', 'b-Hall', 'c']);
    expect(page.total_count).toBe(5);
    expect(keysOf((await tree('b-Hall', 'children')).data)).toEqual(['b-10', 'B-2']);
    expect((await tree('Z', 'children')).data).toEqual([]);
  });
});

describe('GET /api/v1/locations/{location_id}/ancestors', () => {
  it('lists ancestors root first, down to the parent', async () => {
    const page = await tree('Z', 'ancestors');
    expect(keysOf(page.data)).toEqual(['World', 'Campus', 'A-wing', 'a-Wing-1']);
    expect(page.total_count).toBe(4);
    expect(page.data[0]).toEqual(n.World);
    expect(keysOf((await tree('Campus', 'ancestors')).data)).toEqual(['World']);
    expect(await tree('World', 'ancestors')).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
  });
});

describe('tree list paging', () => {
  it.each([
    ['Campus', 'descendants', 2],
    ['Campus', 'children', 2],
    ['Z', 'ancestors', 3],
  ])(
    '%s %s: pages of %i concatenate to the whole list, total_count on every page',
    async (key, kind, limit) => {
      const whole = await tree(key, kind);
      const seen: string[] = [];
      for (let offset = 0; offset < whole.total_count; offset += limit) {
        const page = await tree(key, kind, `?limit=${limit}&offset=${offset}`);
        expect(page).toMatchObject({ limit, offset, total_count: whole.total_count });
        seen.push(...keysOf(page.data));
      }
      expect(seen).toEqual(keysOf(whole.data));
    },
  );

  it('an offset past the end gives data [] with the real total_count', async () => {
    expect(await tree('Campus', 'descendants', '?offset=50&limit=10')).toEqual({
      data: [],
      limit: 10,
      offset: 50,
      total_count: 9,
    });
  });

  it('limit and offset have the shared bounds', async () => {
    const id = n.Campus!.id;
    for (const kind of ['ancestors', 'children', 'descendants']) {
      expect(expectValidationError(await c.get(`${BASE}/${id}/${kind}?limit=201`))).toEqual([
        { field: 'limit', code: 'too_large', message: expect.any(String), params: { max: 200 } },
      ]);
      expect(fieldCodes(await c.get(`${BASE}/${id}/${kind}?offset=-1`))).toEqual([
        ['offset', 'invalid_value'],
      ]);
    }
  });
});

describe('tree lists: what they accept and include', () => {
  it.each([['ancestors'], ['children'], ['descendants']])(
    '%s takes no sort: 400 validation_error saying sorting is not supported on this endpoint',
    async (kind) => {
      for (const sort of ['name', 'external_key', 'bogus', '']) {
        const fields = expectValidationError(await c.get(`${BASE}/${n.Campus!.id}/${kind}?sort=${sort}`));
        expect(fields).toEqual([
          {
            field: 'sort',
            code: 'invalid_context',
            message: 'sorting is not supported on this endpoint',
            params: {},
          },
        ]);
      }
    },
  );

  it.each([['ancestors'], ['children'], ['descendants']])(
    '%s is 404 for a missing or soft-deleted location',
    async (kind) => {
      expectNotFound(await c.get(`${BASE}/2147483647/${kind}`));
      const gone = await c.create({ name: 'gone' });
      expect((await c.del(`${BASE}/${gone.id}`)).statusCode).toBe(204);
      expectNotFound(await c.get(`${BASE}/${gone.id}/${kind}`));
    },
  );

  it('include live rows only: soft-deleted rows are left out', async () => {
    const own = await client(t);
    const root = await own.create({ external_key: 'R', name: 'root' });
    const kept = await own.create({ external_key: 'KEPT', name: 'kept', parent_id: root.id });
    const gone = await own.create({ external_key: 'GONE', name: 'gone', parent_id: root.id });
    expect((await own.del(`${BASE}/${gone.id}`)).statusCode).toBe(204);
    for (const kind of ['children', 'descendants']) {
      const page = await own.list(`${BASE}/${root.id}/${kind}`);
      expect(keysOf(page.data)).toEqual(['KEPT']);
      expect(page.total_count).toBe(1);
    }
    expect(keysOf((await own.list(`${BASE}/${kept.id}/ancestors`)).data)).toEqual(['R']);
  });

  it('apply the temporal predicate to the rows listed, walking through rows outside their window', async () => {
    const own = await client(t);
    const root = await own.create({ external_key: 'T-ROOT', name: 'root' });
    const floor = await own.create({ external_key: 'T-FLOOR', name: 'floor', parent_id: root.id });
    const room = await own.create({ external_key: 'T-ROOM', name: 'room', parent_id: floor.id });
    const future = await own.create({
      external_key: 'T-FUTURE',
      name: 'future',
      parent_id: root.id,
      valid_from: '2999-01-01T00:00:00Z',
    });
    await setWindow(t, floor.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    const list = async (id: number, kind: string) => keysOf((await own.list(`${BASE}/${id}/${kind}`)).data);
    // The expired floor and the future room hide themselves, not the rows beyond them.
    expect(await list(root.id, 'descendants')).toEqual(['T-ROOM']);
    expect(await list(root.id, 'children')).toEqual([]);
    expect(await list(room.id, 'ancestors')).toEqual(['T-ROOT']);
    // The location itself is found whatever its window.
    expect(await list(floor.id, 'children')).toEqual(['T-ROOM']);
    expect(await list(floor.id, 'ancestors')).toEqual(['T-ROOT']);
    expect(await list(future.id, 'ancestors')).toEqual(['T-ROOT']);
    expect((await own.list(`${BASE}/${root.id}/descendants`)).total_count).toBe(1);
  });

  it('show each row as GET /locations/{id} does: its live tags by id, none from other rows', async () => {
    const own = await client(t);
    const root = await own.create({
      external_key: 'TG-ROOT',
      name: 'root',
      tags: [{ tag_type: 'ble', value: 'TG-R' }],
    });
    const mid = await own.create({
      external_key: 'TG-MID',
      name: 'mid',
      parent_id: root.id,
      tags: [
        { tag_type: 'rfid', value: 'TG-M2' },
        { tag_type: 'ble', value: 'TG-M1' },
      ],
    });
    const leaf = await own.create({ external_key: 'TG-LEAF', name: 'leaf', parent_id: mid.id });
    const attached = await own.post(`${BASE}/${leaf.id}/tags`, { tag_type: 'barcode', value: 'TG-L1' });
    expect(attached.statusCode, attached.body).toBe(201);
    const detached = mid.tags.find((tag) => tag.value === 'TG-M2')!;
    expect((await own.del(`${BASE}/${mid.id}/tags/${detached.id}`)).statusCode).toBe(204);

    const [rootNow, midNow, leafNow] = [
      await own.fetch(root.id),
      await own.fetch(mid.id),
      await own.fetch(leaf.id),
    ];
    expect(midNow.tags.map((tag) => tag.value)).toEqual(['TG-M1']);
    expect(leafNow.tags.map((tag) => tag.value)).toEqual(['TG-L1']);
    expect((await own.list(`${BASE}/${root.id}/descendants`)).data).toEqual([midNow, leafNow]);
    expect((await own.list(`${BASE}/${root.id}/children`)).data).toEqual([midNow]);
    expect((await own.list(`${BASE}/${leaf.id}/ancestors`)).data).toEqual([rootNow, midNow]);
    // Several tags come in id order, not by type or value.
    const many = await own.post(`${BASE}/${leaf.id}/tags`, { tag_type: 'barcode', value: 'TG-A0' });
    expect(many.statusCode, many.body).toBe(201);
    const [listed] = (await own.list(`${BASE}/${mid.id}/children`)).data;
    expect(listed!.tags.map((tag) => tag.value)).toEqual(['TG-L1', 'TG-A0']);
    expect(listed!.tags.map((tag) => tag.id)).toEqual(
      [...listed!.tags.map((tag) => tag.id)].sort((a, b) => a - b),
    );
    expect(listed).toEqual(await own.fetch(leaf.id));
  });

  it('follow moves: a re-parented subtree is listed under its new parent', async () => {
    const own = await client(t);
    const a = await own.create({ external_key: 'MV-A', name: 'a' });
    const b = await own.create({ external_key: 'MV-B', name: 'b' });
    const sub = await own.create({ external_key: 'MV-SUB', name: 'sub', parent_id: a.id });
    await own.create({ external_key: 'MV-LEAF', name: 'leaf', parent_id: sub.id });
    expect((await own.patch(`${BASE}/${sub.id}`, { parent_id: b.id })).statusCode).toBe(200);
    expect((await own.list(`${BASE}/${a.id}/descendants`)).data).toEqual([]);
    expect(keysOf((await own.list(`${BASE}/${b.id}/descendants`)).data)).toEqual(['MV-SUB', 'MV-LEAF']);
  });
});
