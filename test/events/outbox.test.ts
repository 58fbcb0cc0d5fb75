/**
 * The outbox: events are written in the transaction of the change that causes them
 * (docs/events.md). Reads through the ingest core, master data through the services.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { sweepNotSeen } from '../../src/events/not-seen.js';
import { storeSightings } from '../../src/tracking/sightings.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { subscribeToMoves } from '../helpers/move-subscription.js';
import { ingestFixture, unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface EventRow {
  id: number;
  type: string;
  subject: string;
  occurred_at: Date;
  location_ids: number[];
  payload: Record<string, unknown>;
}

const subscribe = (orgId: number) => subscribeToMoves(t.database.db, orgId);

async function eventsOf(orgId: number, subject?: string): Promise<EventRow[]> {
  const { rows } = await t.database.db.pool.query<EventRow>(
    `SELECT id, type, subject, occurred_at, location_ids::int[] AS location_ids, payload FROM events
     WHERE org_id = $1 AND ($2::text IS NULL OR subject = $2) ORDER BY id`,
    [orgId, subject ?? null],
  );
  return rows;
}

describe('tracking events', () => {
  it('a handheld read writes asset.first_seen, a read elsewhere asset.moved with both locations', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const dock = await f.location(unique('DOCK'));
    const shelf = await f.location(unique('SHELF'));
    const tag = unique('E2').replaceAll('-', '').toUpperCase();
    const asset = await f.asset(tag);
    const base = Date.now() - 60_000;
    const at = (s: number) => new Date(base + s * 1000).toISOString();
    const submit = (location: number, when: string) =>
      t.services.ingest.records(
        f.orgId,
        [{ observedAt: Date.parse(when), asset: { id: asset }, location: { id: location } }],
        'handheld',
        '{}',
      );
    await submit(dock, at(0));
    await submit(dock, at(1)); // same place: no event
    await submit(shelf, at(2));
    const events = await eventsOf(f.orgId, `asset:${asset}`);
    expect(events.map((e) => e.type)).toEqual(['asset.first_seen', 'asset.moved']);
    const [first, moved] = events as [EventRow, EventRow];
    expect(first.payload).toMatchObject({ asset_id: asset, from_location_id: null, location_id: dock });
    expect(moved.payload).toMatchObject({
      asset_id: asset,
      from_location_id: dock,
      location_id: shelf,
      observed_at: at(2),
      source: { type: 'handheld' },
    });
    expect(moved.location_ids).toEqual([dock, shelf]);
    expect(moved.occurred_at.toISOString()).toBe(at(2));
  });

  it('a reader message names the reader and the antenna; several moves in one batch are each an event', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const a = await f.location();
    const b = await f.location();
    const tag = 'E2000000000000000000ABCD';
    const asset = await f.asset(tag);
    const { reader } = await f.reader('generic-json', [
      [1, a],
      [2, b],
    ]);
    const t0 = Date.now() - 30_000;
    const read = (antenna: number, ms: number) => ({
      tag: tag,
      antenna,
      time: new Date(t0 + ms).toISOString(),
    });
    const payload = JSON.stringify({ reads: [read(1, 0), read(2, 1000), read(1, 2000)] });
    const outcome = await t.services.ingest.readerMessage(
      { id: reader.id, orgId: f.orgId, family: 'generic-json' },
      payload,
      'mqtt',
    );
    expect(outcome.good, JSON.stringify(outcome)).toBe(3);
    const events = await eventsOf(f.orgId, `asset:${asset}`);
    expect(events.map((e) => [e.type, e.payload.from_location_id, e.payload.location_id])).toEqual([
      ['asset.first_seen', null, a],
      ['asset.moved', a, b],
      ['asset.moved', b, a],
    ]);
    expect(events[1]!.payload.source).toEqual({ type: 'reader', reader_id: reader.id, antenna: 2 });
  });

  it('a late read that changes nothing current writes nothing; one that changes the current place does', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const a = await f.location();
    const b = await f.location();
    const asset = await f.asset(unique('T'));
    const base = Date.now() - 600_000;
    const store = (location: number, ms: number) =>
      t.database.db.withOrg(f.orgId, (tx) =>
        storeSightings(tx, f.orgId, [{ assetId: asset, locationId: location, at: base + ms }]),
      );
    await store(a, 0);
    await store(a, 10_000);
    await store(b, 5_000); // inside the stay at a: history changes, the current place does not
    expect((await eventsOf(f.orgId)).map((e) => e.type)).toEqual(['asset.first_seen']);
  });

  it('a rolled-back change writes no event', async () => {
    const f = await ingestFixture(t);
    const a = await f.location();
    const asset = await f.asset(unique('T'));
    await expect(
      t.database.db.withOrg(f.orgId, async (tx) => {
        await storeSightings(tx, f.orgId, [{ assetId: asset, locationId: a, at: Date.now() - 1000 }]);
        throw new Error('the rest of the message failed');
      }),
    ).rejects.toThrow('the rest of the message failed');
    expect(await eventsOf(f.orgId)).toEqual([]);
  });
});

describe('master-data events', () => {
  it('asset created, updated, renamed, deleted: each carries the resource as the API returns it', async () => {
    const org = await t.createOrg(unique('md'));
    const created = await t.services.assets.create(cliCaller(org.id), { name: 'Pallet' });
    const updated = await t.services.assets.update(cliCaller(org.id), created.id, { name: 'Pallet 2' });
    const renamed = await t.services.assets.rename(cliCaller(org.id), created.id, 'PAL-1');
    await t.services.assets.remove(cliCaller(org.id), created.id);
    const events = await eventsOf(org.id, `asset:${created.id}`);
    expect(events.map((e) => e.type)).toEqual([
      'asset.created',
      'asset.updated',
      'asset.updated',
      'asset.deleted',
    ]);
    expect(events[0]!.payload).toEqual(created);
    expect(events[1]!.payload).toEqual(updated);
    expect(events[2]!.payload).toEqual(renamed);
    expect(events[3]!.payload).toMatchObject({ id: created.id, external_key: 'PAL-1' });
    expect(events[3]!.payload.deleted_at).toEqual(expect.any(String));
  });

  it('a keyless create carries the resource as the API returns it, whatever form its values were sent in', async () => {
    // Without tags the row, its key and its event are one statement (insertAssetWithAutoKey).
    const org = await t.createOrg(unique('md'));
    const bodies = [
      { name: 'Plain' },
      {
        name: 'Füll',
        description: 'with\ttab',
        is_active: false,
        metadata: { z: 1, a: { n: 1.5e2, list: [true, null, 'x'] }, '': 0 },
        valid_from: '2020-02-29T23:59:59.123456+05:30',
        valid_to: '2099-12-31T12:00:00-08:00',
      },
      { name: 'Tagged', tags: [{ tag_type: 'barcode' as const, value: unique('BC') }] },
    ];
    const created = [];
    for (const body of bodies) created.push(await t.services.assets.create(cliCaller(org.id), body));
    expect(created.map((a) => a.external_key)).toEqual(['ASSET-0001', 'ASSET-0002', 'ASSET-0003']);
    const events = await eventsOf(org.id);
    expect(events.map((e) => [e.type, e.subject])).toEqual(
      created.map((a) => ['asset.created', `asset:${a.id}`]),
    );
    expect(events.map((e) => e.payload)).toEqual(created);
    for (const asset of created) expect(await t.services.assets.get(org.id, asset.id)).toEqual(asset);
  });

  it('a refused write (409) writes no event', async () => {
    const org = await t.createOrg(unique('md'));
    await t.services.assets.create(cliCaller(org.id), { name: 'A', external_key: 'SAME' });
    await expect(
      t.services.assets.create(cliCaller(org.id), { name: 'B', external_key: 'SAME' }),
    ).rejects.toThrow();
    expect((await eventsOf(org.id)).map((e) => e.type)).toEqual(['asset.created']);
  });

  it('locations and tags', async () => {
    const org = await t.createOrg(unique('md'));
    const root = await t.services.locations.create(cliCaller(org.id), { name: 'Site' });
    const child = await t.services.locations.create(cliCaller(org.id), { name: 'Dock', parent_id: root.id });
    await t.services.locations.update(cliCaller(org.id), child.id, { name: 'Dock 1' });
    await t.services.locations.rename(cliCaller(org.id), child.id, 'DOCK-1');
    const tag = await t.services.tags.attach(
      cliCaller(org.id),
      { kind: 'location', id: child.id },
      { tag_type: 'rfid', value: 'AB' },
    );
    await t.services.tags.detach(cliCaller(org.id), { kind: 'location', id: child.id }, tag.id);
    await t.services.locations.delete(cliCaller(org.id), child.id);
    const events = await eventsOf(org.id);
    expect(events.map((e) => [e.type, e.subject])).toEqual([
      ['location.created', `location:${root.id}`],
      ['location.created', `location:${child.id}`],
      ['location.updated', `location:${child.id}`],
      ['location.updated', `location:${child.id}`],
      ['tag.attached', `tag:${tag.id}`],
      ['tag.detached', `tag:${tag.id}`],
      ['location.deleted', `location:${child.id}`],
    ]);
    expect(events[4]!.payload).toEqual({ ...tag, owner_type: 'location', owner_id: child.id });
    expect(events[4]!.location_ids).toEqual([child.id]);
    expect(events[6]!.payload).toMatchObject({ id: child.id, external_key: 'DOCK-1', name: 'Dock 1' });
  });
});

describe('asset.not_seen', () => {
  it('reports an asset once when its last sighting grows older than the threshold', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const dock = await f.location();
    const asset = await f.asset(unique('T'));
    const now = Date.now();
    const hour = 3600_000;
    // The first sweep only sets the watermark at now - threshold.
    await sweepNotSeen(t.database.db, hour, now - 10 * hour);
    await t.database.db.withOrg(f.orgId, (tx) =>
      storeSightings(tx, f.orgId, [{ assetId: asset, locationId: dock, at: now - 5 * hour }]),
    );
    await sweepNotSeen(t.database.db, hour, now - 5 * hour + 30 * 60_000); // not yet an hour
    expect((await eventsOf(f.orgId)).map((e) => e.type)).toEqual(['asset.first_seen']);
    await sweepNotSeen(t.database.db, hour, now);
    await sweepNotSeen(t.database.db, hour, now + 1000);
    const quiet = (await eventsOf(f.orgId)).filter((e) => e.type === 'asset.not_seen');
    expect(quiet).toHaveLength(1);
    expect(quiet[0]!.payload).toMatchObject({
      asset_id: asset,
      location_id: dock,
      last_seen_at: new Date(now - 5 * hour).toISOString(),
      not_seen_seconds: 3600,
    });
    expect(quiet[0]!.occurred_at.getTime()).toBe(now - 4 * hour);
  });
});

describe('asset.not_seen of sightings that arrive late', () => {
  const hour = 3600_000;
  // The sweeps' watermark is one for the database: each test sweeps from beyond where the
  // tests before it left it.
  const base = Date.now() + 100 * hour;
  const quietOf = async (orgId: number) =>
    (await eventsOf(orgId))
      .filter((e) => e.type === 'asset.not_seen')
      .map((e) => [e.payload.last_seen_at, e.occurred_at.toISOString()]);

  it('a sighting older than the swept window is reported by the next sweep, once', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const dock = await f.location();
    const asset = await f.asset(unique('T'));
    const now = base;
    await sweepNotSeen(t.database.db, hour, now - 10 * hour);
    await sweepNotSeen(t.database.db, hour, now); // swept up to now - 1 h
    // A reader delivering what it buffered: seen 5 h ago, an hour's threshold long past.
    await t.database.db.withOrg(f.orgId, (tx) =>
      storeSightings(tx, f.orgId, [{ assetId: asset, locationId: dock, at: now - 5 * hour }]),
    );
    await sweepNotSeen(t.database.db, hour, now + 1000);
    await sweepNotSeen(t.database.db, hour, now + 2000);
    expect(await quietOf(f.orgId)).toEqual([
      [new Date(now - 5 * hour).toISOString(), new Date(now - 4 * hour).toISOString()],
    ]);
  });

  it('a late sighting that extends a reported stay is reported again; one that does not, not', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const dock = await f.location();
    const asset = await f.asset(unique('T'));
    const now = base + 20 * hour;
    const see = (at: number) =>
      t.database.db.withOrg(f.orgId, (tx) =>
        storeSightings(tx, f.orgId, [{ assetId: asset, locationId: dock, at }]),
      );
    await sweepNotSeen(t.database.db, hour, now - 10 * hour);
    await see(now - 9 * hour);
    await sweepNotSeen(t.database.db, hour, now); // reports the sighting of 9 h ago
    await see(now - 6 * hour); // late, but newer: the asset was quiet from then on
    await see(now - 8 * hour); // late and older: the stay's last sighting does not move
    await sweepNotSeen(t.database.db, hour, now + 1000);
    await see(now - 7 * hour);
    await sweepNotSeen(t.database.db, hour, now + 2000);
    expect((await quietOf(f.orgId)).map(([lastSeen]) => lastSeen)).toEqual([
      new Date(now - 9 * hour).toISOString(),
      new Date(now - 6 * hour).toISOString(),
    ]);
  });
});

describe('the dispatch queue (migration 0055)', () => {
  const queued = async (ids: number[]) =>
    (
      await t.database.db.pool.query<{ id: number }>(
        'SELECT id FROM event_queue WHERE id = ANY($1) ORDER BY id',
        [ids],
      )
    ).rows.map((r) => r.id);
  const rowVersions = async (ids: number[]) =>
    (
      await t.database.db.pool.query<{ v: string }>(
        'SELECT ctid::text || xmin::text AS v FROM events WHERE id = ANY($1) ORDER BY id',
        [ids],
      )
    ).rows.map((r) => r.v);

  it('queues every event its writer commits; the dispatcher takes them off and leaves the rows as written', async () => {
    const f = await ingestFixture(t);
    await subscribe(f.orgId);
    const dock = await f.location();
    const shelf = await f.location();
    const asset = await f.asset(unique('T'));
    const at = Date.now() - 60_000;
    await t.database.db.withOrg(f.orgId, (tx) =>
      storeSightings(tx, f.orgId, [
        { assetId: asset, locationId: dock, at },
        { assetId: asset, locationId: shelf, at: at + 1000 },
      ]),
    );
    await t.services.assets.update(cliCaller(f.orgId), asset, { name: 'Renamed' });
    const events = await eventsOf(f.orgId);
    expect(events.map((e) => e.type)).toEqual(['asset.first_seen', 'asset.moved', 'asset.updated']);
    const ids = events.map((e) => e.id);
    expect(await queued(ids)).toEqual(ids);
    const before = await rowVersions(ids);
    while ((await dispatchEvents(t.database.db)) > 0) {}
    expect(await queued(ids)).toEqual([]);
    expect(await rowVersions(ids)).toEqual(before);
  });

  it('an event rolled back leaves nothing queued', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const asset = await f.asset(unique('T'));
    const { rows } = await t.database.db.pool.query<{ last: number | null }>(
      'SELECT max(id) AS last FROM events',
    );
    await expect(
      t.database.db.withOrg(f.orgId, async (tx) => {
        await storeSightings(tx, f.orgId, [{ assetId: asset, locationId: dock, at: Date.now() - 1000 }]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const after = await t.database.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM event_queue WHERE id > $1',
      [rows[0]?.last ?? 0],
    );
    expect(after.rows[0]!.n).toBe(0);
  });

  it('the app role can add to the queue through its writes but neither read it nor take from it', async () => {
    const org = await t.createOrg(unique('q'));
    for (const sql of [
      'SELECT id FROM event_queue',
      'DELETE FROM event_queue',
      'UPDATE event_queue SET id = id',
    ]) {
      await expect(t.database.db.withOrg(org.id, (tx) => tx.query(sql))).rejects.toThrow(/permission denied/);
    }
  });
});
