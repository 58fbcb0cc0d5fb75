/**
 * The asset form's metadata rows refuse a number the browser's JSON.parse would round
 * (web/src/json-numbers.ts): sent rounded, it would reach the API as another, valid number
 * and be stored without a word. The rule is the API's (src/json-checks.ts heldExactly),
 * checked against it literal by literal so the two copies cannot drift.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heldExactly } from '../../src/json-checks.js';
import { roundedNumber } from '../../web/src/json-numbers.js';
import { metadataOf } from '../../web/src/pages/asset-fields.js';

const rows = (...values: string[]) => values.map((value, i) => ({ uid: i, key: `k${i}`, value }));

describe('the asset form’s metadata numbers', () => {
  it('a number past a double’s precision or range is a problem of its row; its quoted form and ordinary numbers are not', () => {
    const { metadata, problems } = metadataOf(
      rows(
        '1796314808192123456',
        '"1796314808192123456"',
        '{"ids": [1, 9007199254740993]}',
        '1e-400',
        '12.5',
        '1E2',
        '-0',
        '0.30000000000000004',
        '{"note": "0.12345678901234567890", "n": 3}',
      ),
    );
    expect([...problems.keys()]).toEqual([0, 2, 3]);
    expect(problems.get(0)).toBe(
      'The number 1796314808192123456 has more digits than can be stored exactly: write it in quotes.',
    );
    expect(problems.get(2)).toContain('9007199254740993');
    expect(metadata.k1).toBe('1796314808192123456');
    expect(metadata.k4).toBe(12.5);
  });

  it('finds a number rounded exactly where the API does', () => {
    const literal = fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^(0|[1-9]\d{0,24})$/),
        fc.option(fc.stringMatching(/^\d{1,24}$/), { nil: undefined }),
        fc.option(fc.integer({ min: -400, max: 400 }), { nil: undefined }),
      )
      .map(
        ([negative, int, fraction, exponent]) =>
          `${negative ? '-' : ''}${int}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : `e${exponent}`}`,
      );
    fc.assert(
      fc.property(literal, (l) => {
        expect(roundedNumber(l) === undefined).toBe(heldExactly(l));
      }),
      { numRuns: 2000 },
    );
  });
});
