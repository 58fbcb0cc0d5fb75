/**
 * The 409 of a location key already held (API-SPEC Locations: create and rename; the error
 * text is not contractual, master-data.md says what it names). A holder outside its
 * validity window is in no list and no external_key lookup (list rule 4: "reachable only
 * by id"), so the conflict's detail is the only place a caller can learn which record holds
 * the key; it names it, as the asset conflicts do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { BASE, type Client, client, expectConflict } from './helpers.js';

let t: TestApp;
let c: Client;
beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
});
afterAll(async () => {
  await t.close();
});

describe('a location external_key already held: 409 naming the holder', () => {
  it('on create, the detail names the holding location by id, even one outside its window', async () => {
    const future = await c.create({
      name: 'future',
      external_key: 'KC-FUT',
      valid_from: '2999-01-01T00:00:00Z',
    });
    expect((await c.list(`${BASE}?external_key=KC-FUT`)).total_count).toBe(0);
    const error = expectConflict(await c.post(BASE, { name: 'again', external_key: 'KC-FUT' }));
    expect(error.detail).toBe(`external_key KC-FUT is already used by location ${future.id}`);
    expect((await c.get(`${BASE}/${future.id}`)).statusCode).toBe(200);
  });

  it('on rename, the detail names the holding location by id', async () => {
    const holder = await c.create({ name: 'holder', external_key: 'KC-HELD' });
    const other = await c.create({ name: 'other', external_key: 'KC-OTHER' });
    const error = expectConflict(await c.post(`${BASE}/${other.id}/rename`, { external_key: 'KC-HELD' }));
    expect(error.detail).toBe(`external_key KC-HELD is already used by location ${holder.id}`);
  });
});
