import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportActivity } from '../../src/activity/export.js';
import { cliCaller } from '../../src/caller.js';
import { type Browser, buildInternalApp, type InternalTestApp } from '../internal/helpers.js';

interface Entry {
  id: number;
  occurred_at: string;
  actor: { type: string; id: string | null; name: string | null };
  entity_type: string;
  entity_id: string;
  action: string;
  record_type: string;
  record_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/**
 * The activity log (docs/web-app.md "Activity log"): every kind of write, through the web
 * app and the API, leaves one entry per record with who, what and the values before and
 * after, written in the write's own transaction.
 */
describe('activity log', () => {
  let t: InternalTestApp;
  let me: Browser;
  let apiKey: { id: string; token: string };

  const json = (method: string, url: string, body: unknown, type = 'application/json') =>
    me.request({
      method: method as 'POST',
      url,
      headers: { 'content-type': type },
      payload: JSON.stringify(body),
    });
  const api = (method: string, url: string, body?: unknown) =>
    t.app.inject({
      method: method as 'POST',
      url,
      headers: {
        authorization: `Bearer ${apiKey.token}`,
        ...(body === undefined
          ? {}
          : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  /** The record's entries, newest first, through the route the record pages use. */
  async function recordLog(type: string, id: number | string): Promise<Entry[]> {
    const res = await me.get(`/internal/activity?record_type=${type}&record_id=${id}&limit=200`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }
  const mine = () => ({ type: 'user', id: String(me.userId), name: me.email });

  beforeAll(async () => {
    t = await buildInternalApp();
    me = await t.signUp();
    const minted = await me.post('/internal/keys', {
      name: 'integration',
      scopes: ['assets:read', 'assets:write', 'locations:read', 'locations:write'],
      expires_at: null,
    });
    expect(minted.statusCode, minted.body).toBe(201);
    apiKey = { id: minted.json().data.id, token: minted.json().token };
  });
  afterAll(() => t.close());

  it('records an asset created in the web app, with its tags, as one entry per record', async () => {
    const res = await me.post('/internal/assets', {
      name: 'Pallet jack',
      external_key: 'PJ-1',
      tags: [{ tag_type: 'rfid', value: 'E2001' }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id;
    const log = await recordLog('asset', id);
    expect(log.map((e) => [e.entity_type, e.action])).toEqual([
      ['tag', 'created'],
      ['asset', 'created'],
    ]);
    const created = log[1]!;
    expect(created.actor).toEqual(mine());
    expect(created.entity_id).toBe(String(id));
    expect(created.before).toBeNull();
    expect(created.after).toMatchObject({ id, external_key: 'PJ-1', name: 'Pallet jack', is_active: true });
    // Scan-derived and internal columns are not part of the values.
    expect(created.after).not.toHaveProperty('location_id');
    expect(created.after).not.toHaveProperty('search_text');
    expect(log[0]!.after).toMatchObject({ tag_type: 'rfid', value: 'E2001', asset_id: id });
  });

  it('records an asset the API creates with an assigned key as one entry by the API key', async () => {
    const res = await api('POST', '/api/v1/assets', { name: 'Forklift' });
    expect(res.statusCode, res.body).toBe(201);
    const { id, external_key } = res.json().data;
    const log = await recordLog('asset', id);
    expect(log).toHaveLength(1);
    expect(log[0]!.actor).toEqual({ type: 'api_key', id: apiKey.id, name: 'integration' });
    // The placeholder key the row went in under never shows: the entry ends at the commit's values.
    expect(log[0]!.after).toMatchObject({ external_key, name: 'Forklift' });
  });

  it('records updates, renames and deletes with the values before and after', async () => {
    const id = (await me.post('/internal/assets', { name: 'Ladder', external_key: 'LAD-1' })).json().data.id;
    const patched = await json(
      'PATCH',
      `/internal/assets/${id}`,
      { name: 'Long ladder' },
      'application/merge-patch+json',
    );
    expect(patched.statusCode, patched.body).toBe(200);
    const renamed = await api('POST', `/api/v1/assets/${id}/rename`, { external_key: 'LAD-2' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    // The same value again changes nothing, so it is no activity.
    await json('PATCH', `/internal/assets/${id}`, { name: 'Long ladder' }, 'application/merge-patch+json');
    expect((await me.del(`/internal/assets/${id}`)).statusCode).toBe(204);

    const log = (await recordLog('asset', id)).reverse();
    expect(log.map((e) => e.action)).toEqual(['created', 'updated', 'updated', 'deleted']);
    expect(log[1]!.before).toMatchObject({ name: 'Ladder' });
    expect(log[1]!.after).toMatchObject({ name: 'Long ladder' });
    expect(log[2]!.actor.type).toBe('api_key');
    expect(log[2]!.before).toMatchObject({ external_key: 'LAD-1' });
    expect(log[2]!.after).toMatchObject({ external_key: 'LAD-2' });
    expect(log[3]!.actor).toEqual(mine());
    expect(log[3]!.before).toMatchObject({ deleted_at: null });
    expect(log[3]!.after?.deleted_at).toEqual(expect.any(String));
  });

  it('records locations: create, move, tag attach and detach, delete', async () => {
    const a = (await me.post('/internal/locations', { name: 'Hall A', external_key: 'HALL-A' })).json().data
      .id;
    const b = (await api('POST', '/api/v1/locations', { name: 'Hall B', external_key: 'HALL-B' })).json().data
      .id;
    const shelf = (await me.post('/internal/locations', { name: 'Shelf', parent_id: a })).json().data.id;
    const moved = await json(
      'PATCH',
      `/internal/locations/${shelf}`,
      { parent_id: b },
      'application/merge-patch+json',
    );
    expect(moved.statusCode, moved.body).toBe(200);
    const tag = await me.post(`/internal/locations/${shelf}/tags`, { tag_type: 'barcode', value: 'SH-1' });
    expect(tag.statusCode, tag.body).toBe(201);
    expect((await me.del(`/internal/locations/${shelf}/tags/${tag.json().data.id}`)).statusCode).toBe(204);
    expect((await me.del(`/internal/locations/${shelf}`)).statusCode).toBe(204);

    const log = (await recordLog('location', shelf)).reverse();
    expect(log.map((e) => [e.entity_type, e.action])).toEqual([
      ['location', 'created'],
      ['location', 'updated'],
      ['tag', 'created'],
      ['tag', 'deleted'],
      ['location', 'deleted'],
    ]);
    expect(log[0]!.after).toMatchObject({ parent_id: a, name: 'Shelf' });
    expect(log[1]!.before).toMatchObject({ parent_id: a });
    expect(log[1]!.after).toMatchObject({ parent_id: b });
    expect(log[3]!.before).toMatchObject({ value: 'SH-1', detached_at: null });
    expect(log[3]!.after?.detached_at).toEqual(expect.any(String));
    expect((await recordLog('location', b))[0]!.actor.type).toBe('api_key');
  });

  it('records API keys minted and revoked', async () => {
    const minted = await me.post('/internal/keys', {
      name: 'temp',
      scopes: ['assets:read'],
      expires_at: null,
    });
    const id = minted.json().data.id;
    expect((await me.post(`/internal/keys/${id}/revoke`)).statusCode).toBe(200);
    const log = (await recordLog('api_key', id)).reverse();
    expect(log.map((e) => e.action)).toEqual(['created', 'deleted']);
    expect(log[0]!.after).toMatchObject({ name: 'temp', scopes: ['assets:read'], revoked_at: null });
    expect(log[1]!.after?.revoked_at).toEqual(expect.any(String));
    expect(log[1]!.actor).toEqual(mine());
  });

  it('records readers, their scan points and credential rotation without the secrets', async () => {
    const loc = (await me.post('/internal/locations', { name: 'Dock', external_key: 'DOCK' })).json().data.id;
    const res = await me.post('/internal/readers', {
      name: 'Gate',
      family: 'zebra-fx',
      identity: 'gate-1',
      topic: `activity/${Date.now()}`,
      webhook: true,
    });
    expect(res.statusCode, res.body).toBe(201);
    const readerId = res.json().data.id;
    const point = await me.post(`/internal/readers/${readerId}/scan-points`, {
      location_id: loc,
      antenna: 1,
    });
    expect(point.statusCode, point.body).toBe(201);
    const rotated = await me.post(`/internal/readers/${readerId}/mqtt-credentials`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(
      (await me.del(`/internal/readers/${readerId}/scan-points/${point.json().data.id}`)).statusCode,
    ).toBe(204);
    expect((await me.del(`/internal/readers/${readerId}`)).statusCode).toBe(204);

    const log = (await recordLog('reader', readerId)).reverse();
    expect(log.map((e) => [e.entity_type, e.action])).toEqual([
      ['reader', 'created'],
      ['scan_point', 'created'],
      ['reader', 'updated'],
      ['scan_point', 'deleted'],
      ['reader', 'deleted'],
    ]);
    expect(log[0]!.after).toMatchObject({ name: 'Gate', identity: 'gate-1' });
    // A secret shows as a short fingerprint: a rotation is visible, the hash is not.
    const before = log[2]!.before!.mqtt_password_hash as string;
    const after = log[2]!.after!.mqtt_password_hash as string;
    expect(before).toMatch(/^[0-9a-f]{8}$/);
    expect(after).toMatch(/^[0-9a-f]{8}$/);
    expect(after).not.toBe(before);
    expect(JSON.stringify(log)).not.toContain('$7$');
    expect(log[1]!.after).toMatchObject({ antenna: 1, location_id: loc });
    // Scan-derived columns (counters, per-minute health) are not what anyone changed.
    for (const entry of log.filter((e) => e.entity_type === 'reader')) {
      for (const values of [entry.before, entry.after]) {
        for (const column of ['good_reads', 'rate_reads', 'rate_errors', 'rate_minute', 'last_error_at']) {
          expect(values ?? {}).not.toHaveProperty(column);
        }
      }
    }
  });

  it('records a password change on the user without the hash', async () => {
    const res = await me.post('/internal/auth/password', {
      current_password: 'correct horse battery',
      new_password: 'correct horse battery 2',
    });
    expect(res.statusCode, res.body).toBe(204);
    const [entry] = await recordLog('user', me.userId);
    expect(entry).toMatchObject({ action: 'updated', actor: mine() });
    expect(entry!.after!.password_changed_at).toEqual(expect.any(String));
    expect(JSON.stringify(entry)).not.toContain('argon2');
  });

  it('records every row an import writes, by the person who imported', async () => {
    const csv = 'external_key,name\nIMP-1,Imported one\nIMP-2,Imported two\n';
    const res = await me.request({
      method: 'POST',
      url: '/internal/import/assets',
      headers: { 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('"result"');
    const list = await me.get('/internal/activity?entity_type=asset&limit=200');
    const imported = (list.json().data as Entry[]).filter((e) =>
      String(e.after?.external_key).startsWith('IMP-'),
    );
    expect(imported.map((e) => [e.after?.external_key, e.action, e.actor.type]).sort()).toEqual([
      ['IMP-1', 'created', 'user'],
      ['IMP-2', 'created', 'user'],
    ]);
  });

  it('records operator commands as the command line, and leaves nothing for a write that failed', async () => {
    const cli = cliCaller(me.orgId);
    const asset = await t.services.assets.create(cli, { name: 'From the CLI', external_key: 'CLI-1' });
    const [entry] = await recordLog('asset', asset.id);
    expect(entry!.actor).toEqual({ type: 'cli', id: null, name: cli.actor.name });

    const before = (await me.get('/internal/activity?limit=1')).json().total_count;
    // A key held by a live asset: 409, the transaction rolls back, and its entry with it.
    const clash = await me.post('/internal/assets', { name: 'Dup', external_key: 'CLI-1' });
    expect(clash.statusCode).toBe(409);
    expect((await me.get('/internal/activity?limit=1')).json().total_count).toBe(before);
  });

  it('does not run on the scan-derived position ingest writes', async () => {
    const loc = (await me.post('/internal/locations', { name: 'Bay', external_key: 'BAY' })).json().data.id;
    const id = (await me.post('/internal/assets', { name: 'Seen', external_key: 'SEEN-1' })).json().data.id;
    await t.database.db.withOrg(me.orgId, (tx) =>
      tx.query(
        'INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at) VALUES ($1, $2, $3, now())',
        [me.orgId, id, loc],
      ),
    );
    expect(await recordLog('asset', id)).toHaveLength(1);
  });

  it('filters by entity type, actor and time range; other organizations see nothing', async () => {
    const byKey = await me.get(`/internal/activity?actor_type=api_key&actor_id=${apiKey.id}&limit=200`);
    const entries = byKey.json().data as Entry[];
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.actor.id === apiKey.id)).toBe(true);

    const locations = (await me.get('/internal/activity?entity_type=location&limit=200')).json()
      .data as Entry[];
    expect(locations.length).toBeGreaterThan(0);
    expect(locations.every((e) => e.entity_type === 'location')).toBe(true);

    const all = (await me.get('/internal/activity?limit=200')).json();
    const newest = all.data[0] as Entry;
    const since = await me.get(
      `/internal/activity?since=${encodeURIComponent(newest.occurred_at)}&limit=200`,
    );
    expect((since.json().data as Entry[]).map((e) => e.id)).toContain(newest.id);
    expect(since.json().total_count).toBeLessThan(all.total_count);
    const until = await me.get(
      `/internal/activity?until=${encodeURIComponent(newest.occurred_at)}&limit=200`,
    );
    expect((until.json().data as Entry[]).map((e) => e.id)).not.toContain(newest.id);

    const actors = (await me.get('/internal/activity/actors')).json().data;
    expect(actors).toEqual(
      expect.arrayContaining([mine(), { type: 'api_key', id: apiKey.id, name: 'integration' }]),
    );

    const other = await t.signUp();
    // Its own sign-up only: the organization and its first user.
    const theirs = (await other.get('/internal/activity')).json().data as Entry[];
    expect(theirs.map((e) => e.entity_type).sort()).toEqual(['organization', 'user']);
    expect(
      (await other.get(`/internal/activity?record_type=user&record_id=${me.userId}`)).json().data,
    ).toEqual([]);
  });

  it('refuses half a record filter and an empty time range', async () => {
    const half = await me.get('/internal/activity?record_type=asset');
    expect(half.statusCode).toBe(400);
    expect(half.json().error.fields[0]).toMatchObject({ field: 'record_id', code: 'required' });
    const range = await me.get('/internal/activity?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z');
    expect(range.statusCode).toBe(400);
    expect((await me.get('/internal/activity?entity_type=planet')).statusCode).toBe(400);
  });

  it('exports the log as NDJSON, oldest first, from --since on, through a cursor in batches', async () => {
    const lines: string[] = [];
    const count = await exportActivity(t.database.db, me.orgId, {}, async (line) => {
      lines.push(line);
    });
    const all = (await me.get('/internal/activity?limit=200')).json();
    expect(count).toBe(all.total_count);
    expect(lines.every((l) => l.endsWith('\n'))).toBe(true);
    const exported = lines.map((l) => JSON.parse(l));
    // The same entries as the route gives, in the opposite order.
    expect(exported).toEqual([...all.data].reverse());

    const middle = exported[Math.floor(exported.length / 2)];
    const since: string[] = [];
    await exportActivity(t.database.db, me.orgId, { since: new Date(middle.occurred_at) }, async (l) => {
      since.push(l);
    });
    expect(since.length).toBeLessThan(lines.length);
    expect(since.map((l) => JSON.parse(l).id)).toContain(middle.id);
    expect(since.every((l) => JSON.parse(l).occurred_at >= middle.occurred_at)).toBe(true);

    // More entries than one FETCH holds: every one comes out once, in order.
    await t.database.db.pool.query(
      `INSERT INTO activity (org_id, actor_type, entity_type, entity_id, action, record_type, record_id, after)
       SELECT $1, 'system', 'asset', g::text, 'created', 'asset', g::text, '{}'::jsonb FROM generate_series(1, 2500) g`,
      [me.orgId],
    );
    const big: number[] = [];
    const n = await exportActivity(t.database.db, me.orgId, {}, async (l) => {
      big.push(JSON.parse(l).id);
    });
    expect(n).toBe(count + 2500);
    expect(new Set(big).size).toBe(n);
  });

  it('sweeps entries older than the retention period', async () => {
    const { rows } = await t.database.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM activity WHERE org_id = $1',
      [me.orgId],
    );
    await t.database.db.pool.query(
      `UPDATE activity SET occurred_at = now() - interval '40 days' WHERE org_id = $1 AND entity_type = 'reader'`,
      [me.orgId],
    );
    const swept = await t.services.internal.activity.sweep(30);
    expect(swept).toBeGreaterThan(0);
    const after = await t.database.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM activity WHERE org_id = $1',
      [me.orgId],
    );
    expect(after.rows[0]!.n).toBe(rows[0]!.n - swept);
    expect((await me.get('/internal/activity?entity_type=reader')).json().total_count).toBe(0);
  });
});
