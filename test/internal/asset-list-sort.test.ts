import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
  insertAsset,
  insertLocation,
} from './helpers.js';

/** The assets list's `sort` (the web app keeps it in the URL with the page and the search). */
describe('GET /internal/assets?sort=', () => {
  let t: InternalTestApp;
  let me: Browser;
  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    const dock = await insertLocation(t, me.orgId, { external_key: 'DOCK', name: 'Dock' });
    const aisle = await insertLocation(t, me.orgId, { external_key: 'AISLE', name: 'Aisle' });
    const place = async (key: string, name: string, location: number | null, seen: string | null) => {
      const id = await insertAsset(t, me.orgId, { external_key: key, name });
      if (location === null) return;
      await t.database.db.pool.query(
        'INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at) VALUES ($1, $2, $3, $4)',
        [me.orgId, id, location, seen],
      );
    };
    await place('K-3', 'Bravo', dock, '2025-01-02T00:00:00Z');
    await place('K-1', 'Charlie', aisle, '2025-01-03T00:00:00Z');
    await place('K-2', 'Alpha', null, null);
  });
  afterAll(() => t.close());

  const names = async (query: string) =>
    (await me.get(`/internal/assets${query}`)).json().data.map((a: { name: string }) => a.name);

  it('orders by name by default, and by key, location or last sighting either way', async () => {
    expect(await names('')).toEqual(['Alpha', 'Bravo', 'Charlie']);
    expect(await names('?sort=-name')).toEqual(['Charlie', 'Bravo', 'Alpha']);
    expect(await names('?sort=external_key')).toEqual(['Charlie', 'Alpha', 'Bravo']);
    expect(await names('?sort=-external_key')).toEqual(['Bravo', 'Alpha', 'Charlie']);
    expect(await names('?sort=location')).toEqual(['Charlie', 'Bravo', 'Alpha']);
    expect(await names('?sort=-location')).toEqual(['Bravo', 'Charlie', 'Alpha']);
    expect(await names('?sort=last_seen_at')).toEqual(['Bravo', 'Charlie', 'Alpha']);
    expect(await names('?sort=-last_seen_at')).toEqual(['Charlie', 'Bravo', 'Alpha']);
    expect(await names('?sort=-name&limit=1&offset=1&q=a')).toEqual(['Bravo']);
  });

  it('refuses an unknown order with a field error', async () => {
    const error = expectInternalError(await me.get('/internal/assets?sort=color'), {
      status: 400,
      type: 'validation_error',
    });
    expect(error.fields?.[0]).toMatchObject({ field: 'sort' });
  });
});
