/**
 * The time of a scan record (`tagtrail scans import`, the handheld route) is taken as
 * given however old, but not further ahead of the service's clock than a reader's may be
 * (5 minutes, docs/ingest.md "Time: reader clocks and the skew bound"): late reads never
 * move an asset back, so one record dated years ahead held its asset at that place until
 * then, whatever readers and handhelds saw meanwhile.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importScanRecords } from '../../src/ingest/import.js';
import {
  type Browser,
  buildInternalApp,
  type InternalTestApp,
  insertAsset,
  insertLocation,
} from '../internal/helpers.js';

let t: InternalTestApp;
let me: Browser;
let dock: number;
let shelf: number;

beforeAll(async () => {
  t = await buildInternalApp();
  me = await t.signUp();
  dock = await insertLocation(t, me.orgId, { external_key: 'DOCK', name: 'Dock' });
  shelf = await insertLocation(t, me.orgId, { external_key: 'SHELF', name: 'Shelf' });
});
afterAll(() => t.close());

const minute = 60_000;
const ndjson = (records: object[]) => Readable.from([records.map((r) => JSON.stringify(r)).join('\n')]);

async function positionOf(assetId: number): Promise<{ location_id: number; last_seen_at: Date } | undefined> {
  const { rows } = await t.database.db.pool.query(
    'SELECT location_id, last_seen_at FROM asset_positions WHERE asset_id = $1',
    [assetId],
  );
  return rows[0];
}

describe('scan record times', () => {
  it('an import refuses a record more than 5 minutes ahead and takes one within them, or of any past', async () => {
    const asset = await insertAsset(t, me.orgId, { external_key: 'IMP-1', name: 'Imported' });
    const ahead = new Date(Date.now() + 60 * minute).toISOString();
    const summary = await importScanRecords(
      t.services.ingest,
      me.orgId,
      ndjson([
        { observed_at: '2001-05-04T09:30:00Z', asset_id: asset, location_id: shelf },
        { observed_at: ahead, asset_id: asset, location_id: dock },
        { observed_at: new Date(Date.now() + 4 * minute).toISOString(), asset_id: asset, location_id: shelf },
      ]),
    );
    expect(summary).toMatchObject({ applied: 2, invalid: 1 });
    expect(summary.errors).toEqual([
      expect.stringMatching(
        new RegExp(`^line 2: observed_at ${ahead} is in the future: at most 5 minutes ahead`),
      ),
    ]);
    expect((await positionOf(asset))?.location_id).toBe(shelf);
  });

  it("names the service's clock as it reads and the latest instant taken, not the bound as the clock", async () => {
    const asset = await insertAsset(t, me.orgId, { external_key: 'IMP-2', name: 'Imported 2' });
    const before = Date.now();
    const summary = await importScanRecords(
      t.services.ingest,
      me.orgId,
      ndjson([{ observed_at: '2099-01-01T00:00:00Z', asset_id: asset, location_id: dock }]),
    );
    const after = Date.now();
    const m = /service's clock \(now (\S+)\), so not after (\S+)$/.exec(summary.errors[0] ?? '');
    expect(m, summary.errors[0]).not.toBeNull();
    const clock = Date.parse(m![1]!);
    expect(clock).toBeGreaterThanOrEqual(before);
    expect(clock).toBeLessThanOrEqual(after);
    expect(Date.parse(m![2]!) - clock).toBe(5 * minute);
  });

  it('a handheld submission dated an hour ahead stores nothing, and later reads still move the asset', async () => {
    const asset = await insertAsset(t, me.orgId, { external_key: 'HH-1', name: 'Handheld' });
    const ahead = await me.post('/internal/handheld', {
      location: { id: dock },
      items: [{ asset_id: asset }],
      observed_at: new Date(Date.now() + 60 * minute).toISOString(),
    });
    expect(ahead.statusCode, ahead.body).toBe(200);
    expect(ahead.json().data).toMatchObject({
      applied: 0,
      errors: [expect.stringMatching(/^item 1: observed_at .* is in the future/)],
    });
    expect(await positionOf(asset)).toBeUndefined();
    const now = await me.post('/internal/handheld', {
      location: { id: shelf },
      items: [{ asset_id: asset }],
    });
    expect(now.json().data).toMatchObject({ applied: 1, errors: [] });
    expect((await positionOf(asset))?.location_id).toBe(shelf);
  });
});
