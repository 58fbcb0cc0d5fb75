import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type LatePlan, planLateReads, planOfPlaced, type StayRange } from './late-reads.js';
import type { Sighting } from './sightings.js';
import { applyChanges, placeRead, type Stay, windowAt } from './stays.js';

let id = 1000;

/** Placing reads one by one, as recordSighting does in the database. */
function replay(stays: Stay[], reads: readonly Sighting[]): Stay[] {
  let out = stays;
  for (const r of reads)
    out = applyChanges(
      out,
      placeRead({ locationId: r.locationId, at: r.at }, windowAt(out, r.at)),
      () => ++id,
    );
  return out;
}

/** The range loadStayRanges reads for reads between `lo` and `hi`. */
function rangeOf(stays: Stay[], lo: number, hi: number): StayRange {
  const upTo = stays.filter((s) => s.startedAt <= lo);
  const from = upTo.length >= 2 ? upTo.at(-2)!.startedAt : null;
  const to = stays.find((s) => s.startedAt > hi)?.startedAt ?? null;
  return {
    stays: stays
      .filter((s) => (from === null || s.startedAt >= from) && (to === null || s.startedAt <= to))
      .map((s) => ({ ...s })),
    completeBefore: from === null,
    completeAfter: to === null,
  };
}

/** The plan applied to the whole history, as writeStayChanges applies it to the table. */
function apply(stays: Stay[], plan: LatePlan): Stay[] {
  const out = stays
    .filter((s) => !plan.deletes.includes(s.id))
    .map((s) => {
      const u = plan.updates.find((x) => x.id === s.id);
      return u ? { ...s, startedAt: u.startedAt, lastSeenAt: u.lastSeenAt } : { ...s };
    });
  for (const i of plan.inserts) out.push({ id: ++id, ...i });
  return out.sort((a, b) => a.startedAt - b.startedAt);
}

/** planLateReads as it was first written: each read applied to a copy of the whole list. */
function planLateReadsOnWholeList(range: StayRange, reads: readonly Sighting[]): LatePlan | null {
  let stays = range.stays.map((s) => ({ ...s }));
  let nextId = 0;
  for (const r of reads) {
    const before = stays.filter((s) => s.startedAt <= r.at).length;
    if (before < 2 && !range.completeBefore) return null;
    if (stays.length - before < 1 && !range.completeAfter) return null;
    const changes = placeRead({ locationId: r.locationId, at: r.at }, windowAt(stays, r.at));
    if (changes.length > 0) stays = applyChanges(stays, changes, () => --nextId);
  }
  return planOfPlaced(range, stays);
}

const shape = (stays: Stay[]) => stays.map((s) => [s.locationId, s.startedAt, s.lastSeenAt]);
const read = (locationId: number, at: number): Sighting => ({ assetId: 1, locationId, at });

describe('planLateReads', () => {
  it('gives the history placing the reads one by one gives, whenever it plans', () => {
    const arb = fc.record({
      stored: fc.array(
        fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 1, max: 60 }) }),
        { maxLength: 40 },
      ),
      late: fc.array(
        fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 1, max: 70 }) }),
        { minLength: 1, maxLength: 12 },
      ),
    });
    let planned = 0;
    let runs = 0;
    fc.assert(
      fc.property(arb, ({ stored, late }) => {
        runs++;
        const base = replay(
          [],
          stored.map((r) => read(r.locationId, r.at)),
        );
        const reads = late.map((r) => read(r.locationId, r.at)).sort((a, b) => a.at - b.at);
        const plan = planLateReads(rangeOf(base, reads[0]!.at, reads.at(-1)!.at), reads);
        if (!plan) return;
        planned++;
        expect(shape(apply(base, plan))).toEqual(shape(replay(base, reads)));
      }),
      { numRuns: 5000 },
    );
    // Declining is the exception (merges eating into the loaded range, colliding starts).
    expect(planned).toBeGreaterThan(runs * 0.9);
  });

  it('plans exactly what placing each read on the whole list (a copy per read) planned', () => {
    // planLateReads replaces only each read's window; the reference re-sorts everything.
    const arb = fc.record({
      stored: fc.array(
        fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 1, max: 40 }) }),
        { maxLength: 40 },
      ),
      late: fc.array(
        fc.record({ locationId: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: 1, max: 45 }) }),
        { minLength: 1, maxLength: 30 },
      ),
      // The loaded range: sometimes the whole history, sometimes what loadStayRanges reads.
      whole: fc.boolean(),
    });
    fc.assert(
      fc.property(arb, ({ stored, late, whole }) => {
        const base = replay(
          [],
          stored.map((r) => read(r.locationId, r.at)),
        );
        const reads = late.map((r) => read(r.locationId, r.at)).sort((a, b) => a.at - b.at);
        const range = whole
          ? { stays: base.map((s) => ({ ...s })), completeBefore: true, completeAfter: true }
          : rangeOf(base, reads[0]!.at, reads.at(-1)!.at);
        expect(planLateReads(range, reads)).toEqual(planLateReadsOnWholeList(range, reads));
      }),
      { numRuns: 5000 },
    );
  });

  it('declines when merges leave a read without its window in the loaded range', () => {
    // Stored: A 1-2, B 3-4, A 5-6, B 7-8; loaded for reads from 7 on: A 5-6 and B 7-8 only.
    const base: Stay[] = [
      { id: 1, locationId: 10, startedAt: 1, lastSeenAt: 2 },
      { id: 2, locationId: 20, startedAt: 3, lastSeenAt: 4 },
      { id: 3, locationId: 10, startedAt: 5, lastSeenAt: 6 },
      { id: 4, locationId: 20, startedAt: 7, lastSeenAt: 8 },
    ];
    const range = rangeOf(base, 7, 7);
    expect(range.stays.map((s) => s.id)).toEqual([3, 4]);
    // A read of A at 7 makes B's stay resume after it; one of B at 5 then merges B 3-4 away.
    const reads = [read(10, 7), read(20, 7)];
    const plan = planLateReads(range, reads);
    if (plan) expect(shape(apply(base, plan))).toEqual(shape(replay(base, reads)));
  });

  it('extends, splits and inserts as placeRead does', () => {
    const base: Stay[] = [
      { id: 1, locationId: 10, startedAt: 100, lastSeenAt: 200 },
      { id: 2, locationId: 20, startedAt: 300, lastSeenAt: 400 },
    ];
    const plan = planLateReads(rangeOf(base, 150, 250), [read(20, 150), read(10, 250)]);
    expect(plan).not.toBeNull();
    expect(shape(apply(base, plan!))).toEqual(shape(replay(base, [read(20, 150), read(10, 250)])));
    expect(plan!.inserts.length).toBeGreaterThan(0);
  });

  it('places reads that split no stay where they stand: extend, insert, move a start back', () => {
    // A 100-200, B 300-400, C 500-600, the whole history loaded.
    const base: Stay[] = [
      { id: 1, locationId: 10, startedAt: 100, lastSeenAt: 200 },
      { id: 2, locationId: 20, startedAt: 300, lastSeenAt: 400 },
      { id: 3, locationId: 30, startedAt: 500, lastSeenAt: 600 },
    ];
    const whole = { stays: base, completeBefore: true, completeAfter: true };
    // A at 150 (inside A: nothing), A at 250 (extends A), D at 450 (a stay of its own),
    // C at 470 (C's start moves back), D at 50 (before everything).
    const reads = [read(40, 50), read(10, 150), read(10, 250), read(40, 450), read(30, 470)];
    const plan = planLateReads(whole, reads);
    expect(plan).toEqual({
      deletes: [],
      updates: [
        { id: 1, startedAt: 100, lastSeenAt: 250 },
        { id: 3, startedAt: 470, lastSeenAt: 600 },
      ],
      inserts: [
        { locationId: 40, startedAt: 50, lastSeenAt: 50 },
        { locationId: 40, startedAt: 450, lastSeenAt: 450 },
      ],
      last: { locationId: 30, startedAt: 470, lastSeenAt: 600 },
    });
    expect(shape(apply(base, plan!))).toEqual(shape(replay(base, reads)));
    // The range's stays are not the ones placed on.
    expect(base[0]!.lastSeenAt).toBe(200);
  });
});
