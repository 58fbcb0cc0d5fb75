/**
 * Organizations are walled off (API-SPEC "What the service does" 4; not_found covers
 * cross-organization resources): another organization's locations are 404 by id on every
 * route, never parents, and never listed.
 */
import type { HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import {
  BASE,
  type Client,
  client,
  expectNotFound,
  fieldCodes,
  keysOf,
  type LocationBody,
} from './helpers.js';

let t: TestApp;
let mine: Client;
let theirs: Client;
let theirRoot: LocationBody;
let theirChild: LocationBody;

beforeAll(async () => {
  t = await buildTestApp();
  mine = await client(t);
  theirs = await client(t);
  theirRoot = await theirs.create({
    external_key: 'SHARED-KEY',
    name: 'Their secret site',
    tags: [{ tag_type: 'rfid', value: 'THEIR-TAG' }],
  });
  theirChild = await theirs.create({
    external_key: 'THEIR-CHILD',
    name: 'Their room',
    parent_id: theirRoot.id,
  });
  await mine.create({ external_key: 'MINE-1', name: 'My site' });
});
afterAll(() => t.close());

describe('another organization', () => {
  it('its location ids are 404 on every location id route, tree routes included, and nothing changes', async () => {
    const id = theirRoot.id;
    const cases: [HTTPMethods, string, unknown?][] = [
      ['GET', `${BASE}/${id}`],
      ['HEAD', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}`, { name: 'hijacked' }],
      ['PATCH', `${BASE}/${id}`, {}],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/rename`, { external_key: 'HIJACKED' }],
      ['GET', `${BASE}/${id}/ancestors`],
      ['GET', `${BASE}/${id}/children`],
      ['GET', `${BASE}/${id}/descendants`],
      ['GET', `${BASE}/${theirChild.id}/ancestors`],
      ['POST', `${BASE}/${id}/tags`, { tag_type: 'ble', value: 'SNEAKY' }],
      ['DELETE', `${BASE}/${id}/tags/${theirRoot.tags[0]!.id}`],
    ];
    for (const [method, url, body] of cases) {
      const res = await t.app.inject({
        method,
        url,
        headers: {
          ...bearer(mine.token),
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      if (method === 'HEAD') {
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.body).toBe('');
      } else {
        expectNotFound(res);
      }
    }
    expect(await theirs.fetch(theirRoot.id)).toEqual(theirRoot);
    expect(await theirs.fetch(theirChild.id)).toEqual(theirChild);
  });

  it('its location cannot be a parent: parent_id and parent_external_key are fk_not_found', async () => {
    expect(fieldCodes(await mine.post(BASE, { name: 'x', parent_id: theirRoot.id }))).toEqual([
      ['parent_id', 'fk_not_found'],
    ]);
    expect(fieldCodes(await mine.post(BASE, { name: 'x', parent_external_key: 'THEIR-CHILD' }))).toEqual([
      ['parent_external_key', 'fk_not_found'],
    ]);
    const own = await mine.create({ name: 'mover' });
    expect(fieldCodes(await mine.patch(`${BASE}/${own.id}`, { parent_id: theirChild.id }))).toEqual([
      ['parent_id', 'fk_not_found'],
    ]);
  });

  it('its locations are never listed, by any filter', async () => {
    for (const query of [
      '',
      '?include_deleted=true',
      '?q=secret',
      '?q=their-tag',
      '?external_key=SHARED-KEY',
      '?external_key=THEIR-CHILD',
      `?parent_id=${theirRoot.id}`,
      '?parent_external_key=SHARED-KEY',
    ]) {
      const page = await mine.list(`${BASE}${query}`);
      expect(
        page.data.every((l) => l.id !== theirRoot.id && l.id !== theirChild.id),
        query,
      ).toBe(true);
    }
    const names = (await mine.list(`${BASE}?include_deleted=true`)).data.map((l) => l.name);
    expect(names).toContain('My site');
    expect(names).not.toContain('Their secret site');
    expect(names).not.toContain('Their room');
  });

  it('external_key is unique per organization: the same key in two organizations is fine', async () => {
    const same = await mine.create({ external_key: 'SHARED-KEY', name: 'mine too' });
    expect(same.external_key).toBe('SHARED-KEY');
    expect((await theirs.fetch(theirRoot.id)).external_key).toBe('SHARED-KEY');
    // A rename into a key another organization holds is fine too.
    expect((await mine.post(`${BASE}/${same.id}/rename`, { external_key: 'THEIR-CHILD' })).statusCode).toBe(
      200,
    );
  });

  it('auto keys are numbered per organization', async () => {
    const a = await client(t);
    const b = await client(t);
    expect((await a.create({ name: 'a' })).external_key).toBe('LOC-0001');
    expect((await b.create({ name: 'b' })).external_key).toBe('LOC-0001');
  });

  it('the tree does not reach across: their tree lists stay theirs', async () => {
    expect(keysOf((await theirs.list(`${BASE}/${theirRoot.id}/descendants`)).data)).toEqual(['THEIR-CHILD']);
    expect(keysOf((await theirs.list(`${BASE}/${theirChild.id}/ancestors`)).data)).toEqual(['SHARED-KEY']);
  });
});
