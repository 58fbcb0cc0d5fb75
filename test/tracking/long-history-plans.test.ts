/**
 * A moving asset's history grows without end, so ingest's reads of it must not grow with
 * it: the newest stay of each asset of a batch, and the stays around a late read, are found
 * by descending the stays index, and an asset of thousands of stays costs what one of a few
 * does. Checked on the plans' row counts (EXPLAIN ANALYZE, as the service's restricted role
 * under row-level security), not on time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { int8Array, textArray, timestampArray } from '../../src/db/binary-arrays.js';
import { refreshCurrentLocation } from '../../src/tracking/positions-repository.js';
import {
  DELETE_STAYS,
  EXTEND_STAYS,
  loadStayRanges,
  lockAssets,
  MOVE_STAYS,
  NEWEST_STAYS,
  STAY_RANGES,
} from '../../src/tracking/repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { explainedRoot, rowsRead } from '../helpers/plan-nodes.js';
import { ingestFixture, unique } from '../ingest/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** Rows of `stays` the plan read: those it returned and those its filters threw away. */
async function staysRead(orgId: number, text: string, values: unknown[]): Promise<number> {
  const plan = await t.database.db.withOrg(orgId, async (tx) => {
    const { rows } = await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
    return explainedRoot(rows);
  });
  return rowsRead(plan, 'stays');
}

/** `count` stays of the asset a minute apart from `start`, alternating between two places. */
async function history(
  orgId: number,
  assetId: number,
  places: [number, number],
  start: number,
  count: number,
) {
  await t.database.db.pool.query(
    `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at)
     SELECT $1, $2, CASE WHEN g % 2 = 0 THEN $3::bigint ELSE $4::bigint END,
            to_timestamp(($5::bigint + g * 60000) / 1000.0), to_timestamp(($5::bigint + g * 60000 + 30000) / 1000.0)
     FROM generate_series(1, $6) g`,
    [orgId, assetId, places[0], places[1], start, count],
  );
}

/** An organization with two places and an asset. */
async function site() {
  const f = await ingestFixture(t);
  const places: [number, number] = [await f.location(), await f.location()];
  return { f, places, asset: await f.asset(unique('T')) };
}

describe('the newest stay of each asset', () => {
  it('is found by one index descent per asset, however long its history', async () => {
    const { f, places, asset: travelled } = await site();
    const [dock, shelf] = places;
    const once = await f.asset(unique('T'));
    const start = Date.now() - 10_000 * 60_000;
    // 3,000 stays, the newest at the dock.
    await history(f.orgId, travelled, [dock, shelf], start, 3000);
    await t.database.db.pool.query(
      `INSERT INTO stays (org_id, asset_id, location_id, started_at, last_seen_at) VALUES ($1, $2, $3, now(), now())`,
      [f.orgId, once, dock],
    );
    await t.database.db.pool.query('ANALYZE stays');
    expect(await staysRead(f.orgId, NEWEST_STAYS, [f.orgId, int8Array([travelled, once])])).toBe(2);

    const { newest } = await t.database.db.withOrg(f.orgId, (tx) =>
      lockAssets(tx, f.orgId, [travelled, once]),
    );
    expect(newest.get(travelled)).toMatchObject({
      locationId: dock,
      lastSeenAt: start + 3000 * 60_000 + 30_000,
    });
    expect(newest.get(once)).toMatchObject({ locationId: dock });
  });

  it('is what the current location is refreshed from after late reads', async () => {
    const { f, places, asset } = await site();
    const [dock, shelf] = places;
    const start = Date.now() - 1_000 * 60_000;
    await history(f.orgId, asset, [dock, shelf], start, 501);
    // The list names the asset twice: it is refreshed once.
    const changed = await t.database.db.withOrg(f.orgId, (tx) =>
      refreshCurrentLocation(tx, f.orgId, [asset, asset]),
    );
    expect(changed).toEqual([{ assetId: asset, locationId: shelf, startedAt: start + 501 * 60_000 }]);
    const { rows } = await t.database.db.pool.query<{ location_id: number; last_seen_ms: number }>(
      `SELECT location_id, floor(extract(epoch FROM last_seen_at) * 1000)::bigint AS last_seen_ms
       FROM asset_positions WHERE asset_id = $1`,
      [asset],
    );
    expect(rows.map((r) => [Number(r.location_id), Number(r.last_seen_ms)])).toEqual([
      [shelf, start + 501 * 60_000 + 30_000],
    ]);
  });

  it('the stays around late reads are read from their range, not from the whole history', async () => {
    const { f, places, asset } = await site();
    const start = Date.now() - 5_000 * 60_000;
    await history(f.orgId, asset, places, start, 3000);
    await t.database.db.pool.query('ANALYZE stays');
    // Late reads between stays 1,500 and 1,502: the range is stays 1,499 to 1,503.
    const from = start + 1500 * 60_000 + 40_000;
    const to = start + 1502 * 60_000 + 10_000;
    const read = await staysRead(f.orgId, STAY_RANGES, [
      f.orgId,
      int8Array([asset]),
      timestampArray([from]),
      timestampArray([to]),
      1001,
    ]);
    expect(read).toBeLessThan(20);
    const ranges = await t.database.db.withOrg(f.orgId, (tx) =>
      loadStayRanges(tx, f.orgId, [{ assetId: asset, from, to }], 1000),
    );
    const range = ranges.get(asset)!;
    expect(range.stays.map((s) => s.startedAt)).toEqual(
      [1499, 1500, 1501, 1502, 1503].map((g) => start + g * 60_000),
    );
    expect([range.completeBefore, range.completeAfter]).toEqual([false, false]);
    // Before the first stay and after the last, the range is open on that side.
    const ends = await t.database.db.withOrg(f.orgId, (tx) =>
      loadStayRanges(tx, f.orgId, [{ assetId: asset, from: start, to: start + 3001 * 60_000 }], 5_000),
    );
    expect(ends.get(asset)!.stays).toHaveLength(3000);
    expect([ends.get(asset)!.completeBefore, ends.get(asset)!.completeAfter]).toEqual([true, true]);
  });

  it('changes stays by their key (asset, start as printed), one index descent each, however long the history', async () => {
    const { f, places, asset } = await site();
    const start = Date.now() - 5_000 * 60_000;
    await history(f.orgId, asset, places, start, 3000);
    await t.database.db.pool.query('ANALYZE stays');
    const { newest } = await t.database.db.withOrg(f.orgId, (tx) => lockAssets(tx, f.orgId, [asset]));
    const last = newest.get(asset)!;
    const ranges = await t.database.db.withOrg(f.orgId, (tx) =>
      loadStayRanges(
        tx,
        f.orgId,
        [{ assetId: asset, from: start + 1500 * 60_000, to: start + 1500 * 60_000 }],
        10,
      ),
    );
    const [, gone, moved] = ranges.get(asset)!.stays;
    const at = (ms: number) => timestampArray([ms]);
    const one = int8Array([asset]);
    // EXPLAIN ANALYZE runs each statement: the newest stay is extended, one stay deleted, the next one moved.
    // Each reads two stays: the probe that finds the key's stay, and the fetch of that row to change it.
    expect(
      await staysRead(f.orgId, EXTEND_STAYS, [
        f.orgId,
        one,
        textArray([last.key]),
        at(last.lastSeenAt + 1000),
      ]),
    ).toBe(2);
    expect(await staysRead(f.orgId, DELETE_STAYS, [f.orgId, one, textArray([gone!.key!])])).toBe(2);
    expect(
      await staysRead(f.orgId, MOVE_STAYS, [
        f.orgId,
        one,
        textArray([moved!.key!]),
        at(gone!.startedAt),
        at(moved!.lastSeenAt),
      ]),
    ).toBe(2);
    const after = await t.database.db.withOrg(f.orgId, (tx) =>
      loadStayRanges(tx, f.orgId, [{ assetId: asset, from: gone!.startedAt, to: gone!.startedAt }], 10),
    );
    expect(after.get(asset)!.stays.map((s) => [s.startedAt, s.lastSeenAt])).toContainEqual([
      gone!.startedAt,
      moved!.lastSeenAt,
    ]);
    const extended = await t.database.db.withOrg(f.orgId, (tx) => lockAssets(tx, f.orgId, [asset]));
    expect(extended.newest.get(asset)!.lastSeenAt).toBe(last.lastSeenAt + 1000);
  });
});
