import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compact, planAppend, type Sighting } from './sightings.js';
import { applyChanges, placeRead, type Stay, windowAt } from './stays.js';

// One id sequence for every replay: a replay continuing from another's stays must not
// hand out ids those stays already carry.
let id = 1000;

function replay(stays: Stay[], reads: Sighting[]): Stay[] {
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

describe('planAppend', () => {
  const storedAndBatch = fc.record({
    stored: fc.array(
      fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 1, max: 50 }) }),
    ),
    batch: fc.array(
      fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 30, max: 100 }) }),
      { maxLength: 12 },
    ),
  });

  it('gives the same history as placing every read, whenever it applies', () => {
    let applied = 0;
    fc.assert(
      fc.property(storedAndBatch, ({ stored, batch }) => {
        const base = replay(
          [],
          stored.map((r) => ({ assetId: 1, ...r })),
        );
        const sorted = batch.map((r) => ({ assetId: 1, ...r })).sort((a, b) => a.at - b.at);
        const newest = base.at(-1);
        const plan = planAppend(
          sorted,
          newest ? { id: newest.id, locationId: newest.locationId, lastSeenAt: newest.lastSeenAt } : null,
        );
        if (!plan) {
          // It declines only batches reaching back to the newest sighting, or with a tie.
          const tie = sorted.some(
            (r, i) => i > 0 && r.at === sorted[i - 1]!.at && r.locationId !== sorted[i - 1]!.locationId,
          );
          expect(tie || (newest !== undefined && sorted[0]!.at <= newest.lastSeenAt)).toBe(true);
          return;
        }
        applied++;
        const planned = base.map((s) => ({ ...s }));
        if (plan.extendTo !== null) planned.at(-1)!.lastSeenAt = plan.extendTo;
        for (const [i, stay] of plan.inserts.entries()) planned.push({ id: 5000 + i, ...stay });
        expect(shape(planned)).toEqual(shape(replay(base, sorted)));
      }),
      { numRuns: 5000 },
    );
    expect(applied).toBeGreaterThan(1000);
  });

  it('extends the current stay and appends the moves', () => {
    const read = (locationId: number, at: number) => ({ assetId: 1, locationId, at });
    expect(
      planAppend([read(1, 10), read(1, 12), read(2, 15), read(2, 16), read(1, 20)], {
        id: 7,
        locationId: 1,
        lastSeenAt: 5,
      }),
    ).toEqual({
      extendTo: 12,
      inserts: [
        { locationId: 2, startedAt: 15, lastSeenAt: 16 },
        { locationId: 1, startedAt: 20, lastSeenAt: 20 },
      ],
    });
    expect(planAppend([read(1, 10)], null)).toEqual({
      extendTo: null,
      inserts: [{ locationId: 1, startedAt: 10, lastSeenAt: 10 }],
    });
    expect(planAppend([read(1, 5)], { id: 7, locationId: 1, lastSeenAt: 5 })).toBeNull();
    expect(planAppend([read(1, 9), read(2, 9)], { id: 7, locationId: 1, lastSeenAt: 5 })).toBeNull();
  });
});
