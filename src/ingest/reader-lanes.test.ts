import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchKey } from '../tracking/resolve.js';
import type { Read } from './adapters/types.js';
import type { ReaderMessage } from './reader-batch.js';
import { homeLane, laneOfKey, planMessage, READER_LANES } from './reader-lanes.js';

const read = (tagValue: string, tagType: Read['tagType'] = 'rfid'): Read => ({
  tagValue,
  tagType,
  antenna: 1,
  rssi: null,
  readerTime: null,
});

const message = (readerId: number, reads: Read[]): ReaderMessage => ({
  reader: { id: readerId, orgId: 1, family: 'generic-json' },
  payload: '{}',
  parsed: { reads, errors: [], failed: 0 },
  source: 'mqtt',
  receivedAt: 0,
  key: null,
});

/** A tag whose reads go to `lane`: the first of E2…0, E2…1, … that does. */
function tagIn(lane: number, skip = 0): string {
  let found = 0;
  for (let i = 0; ; i++) {
    const tag = `E200000000000000000${String(i).padStart(5, '0')}`;
    if (laneOfKey(matchKey('rfid', tag)) === lane && found++ === skip) return tag;
  }
}

describe('laneOfKey', () => {
  it('gives a tag the same lane every time, within the lanes', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 16 }), (key, lanes) => {
        const lane = laneOfKey(key, lanes);
        expect(lane).toBe(laneOfKey(key, lanes));
        expect(Number.isInteger(lane) && lane >= 0 && lane < lanes).toBe(true);
      }),
    );
  });

  it('spreads sequential EPCs over every lane about evenly', () => {
    const counts = new Array(READER_LANES).fill(0);
    for (let i = 0; i < 10_000; i++)
      counts[laneOfKey(`E2000000000000000000${i.toString(16).padStart(4, '0')}`)]++;
    for (const c of counts) expect(c).toBeGreaterThan(2_000);
  });
});

describe('planMessage', () => {
  it('stores a message whose tags are all in one lane whole there, booked with its reads', () => {
    const readerId = 6;
    for (let lane = 0; lane < READER_LANES; lane++) {
      const plan = planMessage(
        message(readerId, [read(tagIn(lane)), read(tagIn(lane, 1)), read(tagIn(lane))]),
      );
      expect(plan).toMatchObject({ whole: { lane, reads: null, book: true } });
    }
  });

  it('stores a message without reads whole, in its reader lane', () => {
    expect(planMessage(message(3, []))).toMatchObject({ whole: { lane: homeLane(3), book: true } });
  });

  it('splits a message by its tags lanes, then books it in the reader lane without reads', () => {
    const readerId = 5;
    const home = homeLane(readerId);
    const other = (home + 1) % READER_LANES;
    const tags = [tagIn(home), tagIn(other), tagIn(home, 1), tagIn(other)];
    const plan = planMessage(
      message(
        readerId,
        tags.map((t) => read(t)),
      ),
    );
    if (!('parts' in plan)) throw new Error('expected parts');
    expect(plan.parts.map((p) => [p.lane, p.reads, p.book])).toEqual([
      [Math.min(home, other), home < other ? [0, 2] : [1, 3], false],
      [Math.max(home, other), home < other ? [1, 3] : [0, 2], false],
    ]);
    expect(plan.book).toMatchObject({ lane: home, reads: [], book: true });
    expect(plan.book.keys).toEqual(tags.map((t) => matchKey('rfid', t)));
  });

  it('puts every read in exactly one part, the lane of its tag', () => {
    const tag = fc.oneof(
      fc
        .string({ unit: fc.constantFrom(...'0123456789ABCDEF'), minLength: 1, maxLength: 24 })
        .map((v) => read(v)),
      fc.string({ minLength: 1, maxLength: 12 }).map((v) => read(v, 'barcode')),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(tag, { maxLength: 60 }), (readerId, reads) => {
        const plan = planMessage(message(readerId, reads));
        const keys = reads.map((r) => matchKey(r.tagType ?? 'rfid', r.tagValue));
        if ('whole' in plan) {
          const lane = keys.length > 0 ? laneOfKey(keys[0]!) : homeLane(readerId);
          expect(plan.whole.lane).toBe(lane);
          expect(keys.every((k) => laneOfKey(k) === lane)).toBe(true);
          return;
        }
        expect(plan.book.lane).toBe(homeLane(readerId));
        const seen = plan.parts.flatMap((p) => {
          expect(p.book).toBe(false);
          for (const i of p.reads!) expect(laneOfKey(keys[i]!)).toBe(p.lane);
          return p.reads!;
        });
        expect(seen.sort((a, b) => a - b)).toEqual(keys.map((_, i) => i));
        expect(new Set(plan.parts.map((p) => p.lane)).size).toBe(plan.parts.length);
      }),
    );
  });
});
