import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compact, type Sighting } from './sightings.js';
import { applyChanges, placeRead, type Stay, windowAt } from './stays.js';

function replay(stays: Stay[], reads: Sighting[]): Stay[] {
  let id = 1000;
  let out = stays;
  for (const r of reads)
    out = applyChanges(
      out,
      placeRead({ locationId: r.locationId, at: r.at }, windowAt(out, r.at)),
      () => ++id,
    );
  return out;
}

const shape = (stays: Stay[]) => stays.map((s) => [s.locationId, s.startedAt, s.lastSeenAt]);

describe('compact', () => {
  it('keeps the first and last read of each run at one location', () => {
    const reads = [1, 2, 3, 4].map((at) => ({ assetId: 1, locationId: at < 3 ? 10 : 20, at }));
    expect(compact(reads, null).map((r) => r.at)).toEqual([1, 2, 3, 4]);
    const longRun = [1, 2, 3, 4, 5].map((at) => ({ assetId: 1, locationId: 10, at }));
    expect(compact(longRun, null).map((r) => r.at)).toEqual([1, 5]);
  });

  it('applies batches reaching into the past read by read', () => {
    const reads = [5, 6, 7].map((at) => ({ assetId: 1, locationId: 10, at }));
    expect(compact(reads, 6)).toHaveLength(3);
  });

  it('gives the same history as applying every read, for batches newer than what is stored', () => {
    const arb = fc.record({
      stored: fc.array(
        fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 1, max: 50 }) }),
      ),
      batch: fc.array(
        fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 51, max: 100 }) }),
      ),
    });
    fc.assert(
      fc.property(arb, ({ stored, batch }) => {
        const base = replay(
          [],
          stored.map((r) => ({ assetId: 1, ...r })),
        );
        const sorted = batch.map((r) => ({ assetId: 1, ...r })).sort((a, b) => a.at - b.at);
        const last = base.at(-1)?.lastSeenAt ?? null;
        expect(shape(replay(base, compact(sorted, last)))).toEqual(shape(replay(base, sorted)));
      }),
      { numRuns: 3000 },
    );
  });
});
