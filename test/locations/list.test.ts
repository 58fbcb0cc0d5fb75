/**
 * GET /api/v1/locations: its query parameters, default order, and API-SPEC "Rules shared
 * by list endpoints" 1-7 and the liveness axes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';
import { BASE, type Client, client, fieldCodes, keysOf, type LocationBody, setWindow } from './helpers.js';

let t: TestApp;
let c: Client;
/** Keyed by external_key. */
const loc: Record<string, LocationBody> = {};

beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
  // Created in an order unlike the key order, so ids do not follow keys.
  const spec: [string, string, Record<string, unknown>][] = [
    ['SITE-B', 'Bravo site', {}],
    ['SITE-A', 'Alpha site', { description: 'Head office, 50% of stock' }],
    ['ROOM-2', 'Cold room', { parent: 'SITE-A', is_active: false }],
    ['ROOM-1', 'Assembly', { parent: 'SITE-A', tags: [{ tag_type: 'rfid', value: 'E280-DOOR' }] }],
    ['ROOM-3', 'Dock_1', { parent: 'SITE-B' }],
    ['room-1', 'Zebra hall', { parent: 'SITE-B', description: 'lower-case twin' }],
  ];
  for (const [key, name, extra] of spec) {
    const { parent, ...rest } = extra as { parent?: string };
    loc[key] = await c.create({
      external_key: key,
      name,
      ...rest,
      ...(parent ? { parent_id: loc[parent]!.id } : {}),
    });
  }
});
afterAll(() => t.close());

const list = (query = '') => c.list(`${BASE}${query}`);

describe('GET /api/v1/locations', () => {
  it('returns the list envelope, ordered by external_key then id by default', async () => {
    const page = await list();
    expect(Object.keys(page).sort()).toEqual(['data', 'limit', 'offset', 'total_count']);
    expect(page).toMatchObject({ limit: 50, offset: 0, total_count: 6 });
    expect(keysOf(page.data)).toEqual(['ROOM-1', 'ROOM-2', 'ROOM-3', 'SITE-A', 'SITE-B', 'room-1']);
    expect(page.data[0]).toEqual(loc['ROOM-1']);
  });

  it('returns data [] (never null) and total_count 0 when nothing matches', async () => {
    expect(await list('?external_key=NOPE')).toEqual({ data: [], limit: 50, offset: 0, total_count: 0 });
  });

  it('sorts by external_key, name or created_at, each optionally descending, id breaking ties', async () => {
    expect(keysOf((await list('?sort=name')).data)).toEqual([
      'SITE-A',
      'ROOM-1',
      'SITE-B',
      'ROOM-2',
      'ROOM-3',
      'room-1',
    ]);
    expect(keysOf((await list('?sort=-name')).data)).toEqual([
      'room-1',
      'ROOM-3',
      'ROOM-2',
      'SITE-B',
      'ROOM-1',
      'SITE-A',
    ]);
    expect(keysOf((await list('?sort=created_at')).data)).toEqual([
      'SITE-B',
      'SITE-A',
      'ROOM-2',
      'ROOM-1',
      'ROOM-3',
      'room-1',
    ]);
    expect(keysOf((await list('?sort=-external_key')).data)).toEqual([
      'room-1',
      'SITE-B',
      'SITE-A',
      'ROOM-3',
      'ROOM-2',
      'ROOM-1',
    ]);
    expect(keysOf((await list('?sort=-created_at')).data)).toEqual([
      'room-1',
      'ROOM-3',
      'ROOM-1',
      'ROOM-2',
      'SITE-A',
      'SITE-B',
    ]);
  });

  it('sorts by several comma-separated fields, id breaking the remaining ties', async () => {
    const own = await client(t);
    const same = [];
    for (const key of ['K-3', 'K-1', 'K-2']) same.push(await own.create({ external_key: key, name: 'Same' }));
    await own.create({ external_key: 'K-0', name: 'Other' });
    const byName = await own.list(`${BASE}?sort=name,-external_key`);
    expect(keysOf(byName.data)).toEqual(['K-0', 'K-3', 'K-2', 'K-1']);
    const byNameOnly = await own.list(`${BASE}?sort=name`);
    expect(byNameOnly.data.slice(1).map((l) => l.id)).toEqual(same.map((l) => l.id).sort((a, b) => a - b));
  });

  it('rule 5: an unknown sort field is invalid_value with message "unknown sort field: <name>"', async () => {
    for (const [sort, name] of [
      ['updated_at', 'updated_at'],
      ['name,bogus', 'bogus'],
      ['-id', 'id'],
      ['+name', '+name'],
    ]) {
      const fields = expectValidationError(await c.get(`${BASE}?sort=${encodeURIComponent(sort!)}`));
      expect(fields).toEqual([
        {
          field: 'sort',
          code: 'invalid_value',
          message: `unknown sort field: ${name}`,
          params: expect.any(Object),
        },
      ]);
    }
  });

  it('rule 1: repeated filters are any-of; a comma-joined external_key value is one value and invalid_value', async () => {
    expect(keysOf((await list('?external_key=SITE-A&external_key=ROOM-3')).data)).toEqual([
      'ROOM-3',
      'SITE-A',
    ]);
    expect(fieldCodes(await c.get(`${BASE}?external_key=SITE-A,ROOM-3`))).toEqual([
      ['external_key', 'invalid_value'],
    ]);
    expect(fieldCodes(await c.get(`${BASE}?parent_external_key=SITE-A,SITE-B`))).toEqual([
      ['parent_external_key', 'invalid_value'],
    ]);
    const ids = `parent_id=${loc['SITE-A']!.id}&parent_id=${loc['SITE-B']!.id}`;
    expect(keysOf((await list(`?${ids}`)).data)).toEqual(['ROOM-1', 'ROOM-2', 'ROOM-3', 'room-1']);
    expect(fieldCodes(await c.get(`${BASE}?parent_id=1,2`))).toEqual([['parent_id', 'invalid_value']]);
  });

  it('rule 2: the id and key forms of the parent are exclusive, one ambiguous_fields entry each, even when they agree', async () => {
    const site = loc['SITE-A']!;
    const fields = expectValidationError(
      await c.get(`${BASE}?parent_id=${site.id}&parent_external_key=${site.external_key}`),
    );
    expect(fields.map((f) => [f.field, f.code])).toEqual([
      ['parent_id', 'ambiguous_fields'],
      ['parent_external_key', 'ambiguous_fields'],
    ]);
  });

  it('rule 3: external_key-typed filters reject characters outside ^[A-Za-z0-9-]+$', async () => {
    for (const [name, value] of [
      ['external_key', 'A_B'],
      ['external_key', 'A%20B'],
      ['parent_external_key', 'Ä'],
      ['external_key', ''],
    ]) {
      const fields = expectValidationError(await c.get(`${BASE}?${name}=${value}`));
      expect(fields[0]!.field).toBe(name);
      expect(fields[0]!.params.index).toBe(0);
      expect(['invalid_value', 'too_short']).toContain(fields[0]!.code);
    }
    expect(fieldCodes(await c.get(`${BASE}?external_key=A_B`))).toEqual([['external_key', 'invalid_value']]);
  });

  it('rule 4: external_key lookups apply the temporal predicate; future-dated and expired rows are reachable only by id', async () => {
    const future = await c.create({
      external_key: 'T-FUTURE',
      name: 'future',
      valid_from: '2999-01-01T00:00:00Z',
    });
    const expired = await c.create({ external_key: 'T-EXPIRED', name: 'expired' });
    await setWindow(t, expired.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    for (const key of ['T-FUTURE', 'T-EXPIRED']) {
      const page = await list(`?external_key=${key}`);
      expect(page.total_count).toBe(0);
      expect(page.data).toEqual([]);
      expect((await list(`?external_key=${key}&include_deleted=true`)).total_count).toBe(0);
    }
    expect((await c.fetch(future.id)).external_key).toBe('T-FUTURE');
    expect((await c.fetch(expired.id)).external_key).toBe('T-EXPIRED');
    // A window that has started and not ended is listed.
    const current = await c.create({ external_key: 'T-NOW', name: 'now', valid_to: '2999-01-01T00:00:00Z' });
    expect((await list('?external_key=T-NOW')).data).toEqual([current]);
    await t.database.db.pool.query('DELETE FROM locations WHERE id = ANY($1)', [
      [future.id, expired.id, current.id],
    ]);
  });

  it('rule 6: list filters sent to detail, write and tree endpoints are invalid_context naming the list endpoint', async () => {
    const id = loc['SITE-A']!.id;
    const routes: [string, string, unknown?][] = [
      ['GET', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}`, {}],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/rename`, { external_key: 'SITE-A' }],
      ['GET', `${BASE}/${id}/ancestors`],
      ['GET', `${BASE}/${id}/children`],
      ['GET', `${BASE}/${id}/descendants`],
    ];
    const filters = [
      'include_deleted=true',
      'is_active=true',
      'external_key=SITE-A',
      'q=site',
      'parent_id=1',
      'parent_external_key=SITE-A',
    ];
    for (const [method, url, body] of routes) {
      for (const filter of filters) {
        const res = await t.app.inject({
          method: method as 'GET',
          url: `${url}?${filter}`,
          headers: {
            ...bearer(c.token),
            ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
            ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}),
          },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        const fields = expectValidationError(res);
        const name = filter.split('=')[0];
        expect(fields, `${method} ${url}?${filter}`).toEqual([
          {
            field: name,
            code: 'invalid_context',
            message: expect.stringContaining('GET /api/v1/locations'),
            params: expect.any(Object),
          },
        ]);
      }
    }
    // Nothing was changed by those requests.
    expect(await c.fetch(id)).toEqual(loc['SITE-A']);
  });

  it('rule 7: limit and offset page through the set; total_count counts the whole filtered set', async () => {
    const seen: string[] = [];
    for (let offset = 0; ; offset += 4) {
      const page = await list(`?limit=4&offset=${offset}`);
      expect(page.limit).toBe(4);
      expect(page.offset).toBe(offset);
      expect(page.total_count).toBe(6);
      seen.push(...keysOf(page.data));
      if (page.data.length === 0 || offset + page.data.length >= page.total_count) break;
    }
    expect(seen).toEqual(keysOf((await list()).data));
    expect(await list('?offset=100')).toEqual({ data: [], limit: 50, offset: 100, total_count: 6 });
    expect((await list('?limit=1&offset=5')).data).toHaveLength(1);
    expect((await list('?limit=1&offset=5')).total_count).toBe(6);
  });

  it('limit is 1..200 (above is too_large with params.max 200) and offset 0..2147483647', async () => {
    expect(expectValidationError(await c.get(`${BASE}?limit=201`))).toEqual([
      { field: 'limit', code: 'too_large', message: expect.any(String), params: { max: 200 } },
    ]);
    expect(fieldCodes(await c.get(`${BASE}?limit=0`))).toEqual([['limit', 'invalid_value']]);
    expect(fieldCodes(await c.get(`${BASE}?limit=abc`))).toEqual([['limit', 'invalid_value']]);
    expect(fieldCodes(await c.get(`${BASE}?offset=-1`))).toEqual([['offset', 'invalid_value']]);
    expect(fieldCodes(await c.get(`${BASE}?offset=2147483648`))).toEqual([['offset', 'too_large']]);
    expect((await list('?limit=200&offset=2147483647')).total_count).toBe(6);
  });

  it('is_active: both values by default; narrowed by is_active=true or false', async () => {
    expect(keysOf((await list('?is_active=false')).data)).toEqual(['ROOM-2']);
    expect((await list('?is_active=true')).total_count).toBe(5);
    expect(fieldCodes(await c.get(`${BASE}?is_active=yes`))).toEqual([['is_active', 'invalid_value']]);
  });

  it('include_deleted adds soft-deleted rows, independent of is_active', async () => {
    const gone = await c.create({ external_key: 'GONE-1', name: 'gone', is_active: false });
    expect((await c.del(`${BASE}/${gone.id}`)).statusCode).toBe(204);
    expect((await list('?external_key=GONE-1')).total_count).toBe(0);
    const withDeleted = await list('?external_key=GONE-1&include_deleted=true');
    expect(withDeleted.total_count).toBe(1);
    expect(withDeleted.data[0]!.deleted_at).toMatch(/\.\d{3}Z$/);
    expect((await list('?include_deleted=true&is_active=false&external_key=GONE-1')).total_count).toBe(1);
    expect((await list('?include_deleted=true&is_active=true&external_key=GONE-1')).total_count).toBe(0);
    expect((await list('?include_deleted=false')).total_count).toBe(6);
    await t.database.db.pool.query('DELETE FROM locations WHERE id = $1', [gone.id]);
  });

  it('rule 4 for the parent: parent_external_key names live, currently effective parents; parent_id any parent', async () => {
    const own = await client(t);
    const parent = await own.create({ external_key: 'EXP-PARENT', name: 'parent' });
    const kid = await own.create({ external_key: 'EXP-KID', name: 'kid', parent_id: parent.id });
    expect(keysOf((await own.list(`${BASE}?parent_external_key=EXP-PARENT`)).data)).toEqual(['EXP-KID']);
    await setWindow(t, parent.id, '2000-01-01T00:00:00Z', '2001-01-01T00:00:00Z');
    expect((await own.list(`${BASE}?parent_external_key=EXP-PARENT`)).total_count).toBe(0);
    expect(keysOf((await own.list(`${BASE}?parent_id=${parent.id}`)).data)).toEqual(['EXP-KID']);
    // A soft-deleted child of a live parent is found by the parent's key with include_deleted=true.
    await setWindow(t, parent.id, '2000-01-01T00:00:00Z', null);
    expect((await own.del(`${BASE}/${kid.id}`)).statusCode).toBe(204);
    expect((await own.list(`${BASE}?parent_external_key=EXP-PARENT`)).total_count).toBe(0);
    expect(
      keysOf((await own.list(`${BASE}?parent_external_key=EXP-PARENT&include_deleted=true`)).data),
    ).toEqual(['EXP-KID']);
  });

  it('parent_id and parent_external_key filter by parent, any-of', async () => {
    expect(keysOf((await list(`?parent_id=${loc['SITE-B']!.id}`)).data)).toEqual(['ROOM-3', 'room-1']);
    expect(keysOf((await list('?parent_external_key=SITE-A')).data)).toEqual(['ROOM-1', 'ROOM-2']);
    expect(keysOf((await list('?parent_external_key=SITE-A&parent_external_key=SITE-B')).data)).toHaveLength(
      4,
    );
    expect((await list('?parent_external_key=site-a')).total_count).toBe(0);
    expect((await list('?parent_id=2147483647')).total_count).toBe(0);
    expect(fieldCodes(await c.get(`${BASE}?parent_id=2147483648`))).toEqual([['parent_id', 'too_large']]);
  });

  it('q matches name, external_key, description and active tag values, case-insensitively', async () => {
    expect(keysOf((await list('?q=ZEBRA')).data)).toEqual(['room-1']);
    expect(keysOf((await list('?q=site-')).data)).toEqual(['SITE-A', 'SITE-B']);
    expect(keysOf((await list('?q=HEAD%20OFFICE')).data)).toEqual(['SITE-A']);
    expect(keysOf((await list('?q=e280-door')).data)).toEqual(['ROOM-1']);
    expect(keysOf((await list('?q=room-1')).data)).toEqual(['ROOM-1', 'room-1']);
    expect((await list('?q=')).total_count).toBe(6);
  });

  it('q stops matching a tag value once the tag is detached', async () => {
    const own = await client(t);
    const tagged = await own.create({ name: 'tagged', tags: [{ tag_type: 'ble', value: 'BEACON-77' }] });
    expect((await own.list(`${BASE}?q=beacon-77`)).total_count).toBe(1);
    const tagId = tagged.tags[0]!.id;
    expect((await own.del(`${BASE}/${tagged.id}/tags/${tagId}`)).statusCode).toBe(204);
    expect((await own.list(`${BASE}?q=beacon-77`)).total_count).toBe(0);
  });

  it('q takes %, _ and backslash literally and does not match across fields', async () => {
    expect(keysOf((await list('?q=50%25')).data)).toEqual(['SITE-A']);
    expect(keysOf((await list('?q=dock_')).data)).toEqual(['ROOM-3']);
    expect((await list('?q=%25')).total_count).toBe(1);
    expect((await list('?q=_')).total_count).toBe(1);
    expect((await list('?q=%5C')).total_count).toBe(0);
    // "Bravo site" + "SITE-B": no match spanning name and key.
    expect((await list('?q=siteSITE')).total_count).toBe(0);
  });

  it('q rejects control characters with invalid_value; only the first value is honoured if repeated', async () => {
    for (const q of ['%00', 'a%0Ab', '%09', '%7F']) {
      expect(fieldCodes(await c.get(`${BASE}?q=${q}`)), q).toEqual([['q', 'invalid_value']]);
    }
    expect(keysOf((await list('?q=zebra&q=bravo')).data)).toEqual(['room-1']);
  });

  it('filters combine with AND', async () => {
    expect(keysOf((await list('?parent_external_key=SITE-A&is_active=true')).data)).toEqual(['ROOM-1']);
    expect(keysOf((await list('?q=room&parent_external_key=SITE-B&sort=-name')).data)).toEqual([
      'room-1',
      'ROOM-3',
    ]);
  });

  it('an undeclared query parameter is unknown_field', async () => {
    expect(fieldCodes(await c.get(`${BASE}?name=x`))).toEqual([['name', 'unknown_field']]);
    expect(fieldCodes(await c.get(`${BASE}?location_id=1`))).toEqual([['location_id', 'unknown_field']]);
  });

  it('parent_external_key on read is kept when the parent is soft-deleted (seen with include_deleted=true)', async () => {
    const own = await client(t);
    const parent = await own.create({ external_key: 'OLD-PARENT', name: 'parent' });
    const child = await own.create({ external_key: 'OLD-CHILD', name: 'child', parent_id: parent.id });
    expect((await own.del(`${BASE}/${child.id}`)).statusCode).toBe(204);
    expect((await own.del(`${BASE}/${parent.id}`)).statusCode).toBe(204);
    const page = await own.list(`${BASE}?include_deleted=true&external_key=OLD-CHILD`);
    expect(page.data[0]).toMatchObject({ parent_id: parent.id, parent_external_key: 'OLD-PARENT' });
    // The key of the deleted parent can be taken by a new location; the child keeps naming the old parent.
    await own.create({ external_key: 'OLD-PARENT', name: 'new holder' });
    const again = await own.list(`${BASE}?include_deleted=true&parent_id=${parent.id}`);
    expect(again.data.map((l) => [l.external_key, l.parent_external_key])).toEqual([
      ['OLD-CHILD', 'OLD-PARENT'],
    ]);
    // The key now names the new holder, so a parent_external_key lookup finds its children, not the old ones.
    expect((await own.list(`${BASE}?include_deleted=true&parent_external_key=OLD-PARENT`)).total_count).toBe(
      0,
    );
  });
});
