import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IngestOutcome } from './outcome.js';
import { type RowMessage, rawLogRows } from './raw-log-rows.js';

const clean = (good = 1): IngestOutcome => ({ good, bad: 0, unknown: 0, errors: [] });
const msg = (reader: number, source = 'mqtt'): RowMessage => ({ reader: { id: reader }, source });
const hundreds = (n: number) => Array.from({ length: n }, () => 100);

describe('rawLogRows', () => {
  it('puts the clean messages of a reader and source in one row, in their order', () => {
    const messages = [msg(1), msg(2), msg(1), msg(1, 'webhook'), msg(2), msg(1)];
    expect(
      rawLogRows(
        messages,
        hundreds(6),
        messages.map(() => clean()),
      ),
    ).toEqual([[0, 2, 5], [1, 4], [3]]);
  });

  it('gives a message with a bad read, an unknown tag or an error a row of its own', () => {
    const messages = [msg(1), msg(1), msg(1), msg(1), msg(1)];
    const outcomes = [
      clean(),
      { good: 0, bad: 1, unknown: 0, errors: ['no scan point for antenna 3'] },
      { good: 1, bad: 0, unknown: 1, errors: [] },
      { good: 0, bad: 0, unknown: 0, errors: ['not JSON'] },
      clean(),
    ];
    expect(rawLogRows(messages, hundreds(5), outcomes)).toEqual([[0, 4], [1], [2], [3]]);
  });

  it('starts another row once a row would pass its size', () => {
    const messages = [msg(1), msg(1), msg(1), msg(1), msg(1)];
    expect(
      rawLogRows(
        messages,
        [400, 400, 400, 1500, 10],
        messages.map(() => clean()),
        1000,
      ),
    ).toEqual([[0, 1], [2], [3], [4]]);
  });

  it('stores every message once, and shares rows only as the rule says', () => {
    const message = fc.record({
      reader: fc.integer({ min: 1, max: 3 }),
      source: fc.constantFrom('mqtt', 'webhook'),
      bytes: fc.integer({ min: 0, max: 600 }),
      problem: fc.constantFrom('none', 'none', 'bad', 'unknown', 'error'),
    });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), fc.integer({ min: 1, max: 2000 }), (given, max) => {
        const messages = given.map((m) => msg(m.reader, m.source));
        const outcomes = given.map((m) => ({
          good: 1,
          bad: m.problem === 'bad' ? 1 : 0,
          unknown: m.problem === 'unknown' ? 1 : 0,
          errors: m.problem === 'error' ? ['x'] : [],
        }));
        const rows = rawLogRows(
          messages,
          given.map((m) => m.bytes),
          outcomes,
          max,
        );
        expect(rows.flat().sort((a, b) => a - b)).toEqual(given.map((_, i) => i));
        for (const row of rows) {
          expect(row).toEqual([...row].sort((a, b) => a - b));
          if (row.length === 1) continue;
          expect(row.every((i) => given[i]!.problem === 'none')).toBe(true);
          expect(new Set(row.map((i) => `${given[i]!.reader}:${given[i]!.source}`)).size).toBe(1);
          expect(row.reduce((sum, i) => sum + given[i]!.bytes, 0)).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 500 },
    );
  });
});
