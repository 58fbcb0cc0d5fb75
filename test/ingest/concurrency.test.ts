/**
 * Messages are stored concurrently (the transports take several at once, several instances
 * share a database): batches touching the same assets at once must give the history one
 * batch after the other would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestService } from '../../src/ingest/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ingestFixture, iso } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

describe('concurrent batches of the same assets', () => {
  it('keep a stationary asset in one stay, whatever order they commit in', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    const assets = await Promise.all([1, 2, 3].map((i) => f.asset(`E20000000000000000F0000${i}`)));
    const ingest = new IngestService(t.database.db);
    const base = Date.now() - 3600_000;
    // 24 batches, each reading all three assets at the dock, stored 12 at a time.
    const batches = Array.from({ length: 24 }, (_, b) =>
      assets.map((id, i) => ({ observedAt: base + b * 1000 + i, asset: { id }, location: { id: dock } })),
    );
    for (let i = 0; i < batches.length; i += 12) {
      await Promise.all(
        batches.slice(i, i + 12).map((records) => ingest.records(f.orgId, records, 'import', '')),
      );
    }
    for (const [i, id] of assets.entries()) {
      const history = await f.history(id);
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ location_id: dock, event_observed_at: iso(base + i) });
      expect(await f.report(id)).toMatchObject([{ asset_last_seen: iso(base + 23_000 + i) }]);
    }
  });

  it('place every move of a moving asset at its instant, and end where the last read was', async () => {
    const f = await ingestFixture(t);
    const places = [await f.location(), await f.location(), await f.location()];
    const asset = await f.asset('E20000000000000000F00010');
    const ingest = new IngestService(t.database.db);
    const base = Date.now() - 3600_000;
    const moves = Array.from({ length: 30 }, (_, k) => ({ at: base + k * 1000, location: places[k % 3]! }));
    await Promise.all(
      moves.map((m) =>
        ingest.records(
          f.orgId,
          [{ observedAt: m.at, asset: { id: asset }, location: { id: m.location } }],
          'import',
          '',
        ),
      ),
    );
    // Arriving out of order, a read inside a stay splits it (docs: the stays model), so the
    // history may hold more rows than moves; but each read's instant is in a stay at its location.
    const history = (await f.history(asset)).reverse();
    const starts = history.map((h) => Date.parse(h.event_observed_at));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    for (let i = 1; i < history.length; i++)
      expect(history[i]!.location_id).not.toBe(history[i - 1]!.location_id);
    for (const m of moves) {
      const containing = history[starts.findLastIndex((s) => s <= m.at)];
      expect(containing?.location_id).toBe(m.location);
    }
    expect(history.at(-1)?.location_id).toBe(places[29 % 3]);
    expect(await f.currentLocation(asset)).toBe(places[29 % 3]);
  });
});
