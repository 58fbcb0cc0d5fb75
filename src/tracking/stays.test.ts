import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyChanges, placeRead, type ReadAt, type Stay, windowAt } from './stays.js';

function replay(reads: ReadAt[]): Stay[] {
  let id = 0;
  let stays: Stay[] = [];
  for (const read of reads) {
    stays = applyChanges(stays, placeRead(read, windowAt(stays, read.at)), () => ++id);
  }
  return stays;
}

const simple = (stays: Stay[]) => stays.map((s) => [s.locationId, s.startedAt, s.lastSeenAt]);

describe('placeRead', () => {
  it('extends the current stay with reads at the same location', () => {
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 1, at: 20 },
          { locationId: 1, at: 30 },
        ]),
      ),
    ).toEqual([[1, 10, 30]]);
  });

  it('starts a new stay on a move', () => {
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 2, at: 20 },
          { locationId: 2, at: 25 },
        ]),
      ),
    ).toEqual([
      [1, 10, 10],
      [2, 20, 25],
    ]);
  });

  it('ignores a duplicate read', () => {
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 1, at: 10 },
        ]),
      ),
    ).toEqual([[1, 10, 10]]);
  });

  it('places a late read before the first stay, extending it backwards at the same location', () => {
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 1, at: 5 },
        ]),
      ),
    ).toEqual([[1, 5, 10]]);
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 2, at: 5 },
        ]),
      ),
    ).toEqual([
      [2, 5, 5],
      [1, 10, 10],
    ]);
  });

  it('places a late read between two stays', () => {
    const base = [
      { locationId: 1, at: 10 },
      { locationId: 2, at: 50 },
    ];
    expect(simple(replay([...base, { locationId: 3, at: 30 }]))).toEqual([
      [1, 10, 10],
      [3, 30, 30],
      [2, 50, 50],
    ]);
    expect(simple(replay([...base, { locationId: 2, at: 30 }]))).toEqual([
      [1, 10, 10],
      [2, 30, 50],
    ]);
    expect(simple(replay([...base, { locationId: 1, at: 30 }]))).toEqual([
      [1, 10, 30],
      [2, 50, 50],
    ]);
  });

  it('splits a stay when a late read at another location lands inside it', () => {
    const reads = [
      { locationId: 1, at: 10 },
      { locationId: 1, at: 40 },
      { locationId: 2, at: 25 },
    ];
    expect(simple(replay(reads))).toEqual([
      [1, 10, 24],
      [2, 25, 25],
      [1, 26, 40],
    ]);
  });

  it('keeps the stored observation when two locations claim one instant with no room to resume', () => {
    const stays = replay([
      { locationId: 1, at: 10 },
      { locationId: 2, at: 11 },
      { locationId: 3, at: 10 },
    ]);
    expect(simple(stays)).toEqual([
      [1, 10, 10],
      [2, 11, 11],
    ]);
    const roomy = replay([
      { locationId: 1, at: 10 },
      { locationId: 1, at: 20 },
      { locationId: 3, at: 10 },
    ]);
    expect(simple(roomy)).toEqual([
      [3, 10, 10],
      [1, 11, 20],
    ]);
  });

  it("keeps a stay's stored last sighting when a read at another location claims its instant", () => {
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 1, at: 20 },
          { locationId: 2, at: 20 },
        ]),
      ),
    ).toEqual([[1, 10, 20]]);
    expect(
      simple(
        replay([
          { locationId: 1, at: 10 },
          { locationId: 1, at: 20 },
          { locationId: 3, at: 30 },
          { locationId: 2, at: 20 },
        ]),
      ),
    ).toEqual([
      [1, 10, 20],
      [3, 30, 30],
    ]);
  });

  it('never moves the current location backwards on a late read', () => {
    const stays = replay([
      { locationId: 1, at: 10 },
      { locationId: 2, at: 100 },
      { locationId: 3, at: 50 },
    ]);
    expect(stays.at(-1)?.locationId).toBe(2);
  });
});

describe('placeRead properties', () => {
  const reads = fc.array(
    fc.record({ locationId: fc.integer({ min: 1, max: 4 }), at: fc.integer({ min: 1, max: 40 }) }),
    { minLength: 1, maxLength: 60 },
  );

  it('keeps stays ordered, non-overlapping, and each within its own bounds', () => {
    fc.assert(
      fc.property(reads, (rs) => {
        const stays = replay(rs);
        expect(new Set(stays.map((s) => s.startedAt)).size).toBe(stays.length);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(reads, (rs) => {
        const stays = replay(rs);
        for (let i = 0; i < stays.length; i++) {
          const s = stays[i]!;
          expect(s.lastSeenAt).toBeGreaterThanOrEqual(s.startedAt);
          const next = stays[i + 1];
          if (next) expect(next.startedAt).toBeGreaterThan(s.lastSeenAt);
          if (next) expect(next.locationId).not.toBe(s.locationId);
        }
      }),
    );
  });

  it('its changes, applied one statement at a time in their order, never hold two stays with one start', () => {
    // The table's key is (asset, started_at): the repository applies placeRead's changes
    // one by one, so every intermediate state must be a valid table too.
    fc.assert(
      fc.property(reads, (rs) => {
        let id = 0;
        let stays: Stay[] = [];
        for (const read of rs) {
          for (const change of placeRead(read, windowAt(stays, read.at))) {
            stays = applyChanges(stays, [change], () => ++id);
            expect(new Set(stays.map((s) => s.startedAt)).size).toBe(stays.length);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('the current stay is at the location of the newest read', () => {
    fc.assert(
      fc.property(reads, (rs) => {
        const stays = replay(rs);
        const newest = Math.max(...rs.map((r) => r.at));
        const last = stays.at(-1)!;
        expect(last.lastSeenAt).toBe(newest);
        const atNewest = rs.filter((r) => r.at === newest).map((r) => r.locationId);
        expect(atNewest).toContain(last.locationId);
      }),
    );
  });

  it('reads in time order give one stay per run of equal locations', () => {
    fc.assert(
      fc.property(reads, (rs) => {
        const sorted = [...rs].sort((a, b) => a.at - b.at);
        const deduped = sorted.filter((r, i) => i === 0 || r.at !== sorted[i - 1]!.at);
        const runs = deduped.filter((r, i) => i === 0 || r.locationId !== deduped[i - 1]!.locationId).length;
        expect(replay(deduped)).toHaveLength(runs);
      }),
    );
  });

  it('storage grows with moves, not reads: a stationary asset has one stay', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 200 }),
        (times) => {
          expect(replay(times.map((at) => ({ locationId: 7, at })))).toHaveLength(1);
        },
      ),
    );
  });
});
