import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { containsCondition, containsPattern } from './list-query.js';

/** The condition and the values it added, with placeholders numbered from $2. */
function condition(q: string) {
  const values: string[] = [];
  const text = containsCondition('t', containsPattern(q), (v) => `$${values.push(v) + 1}`);
  return { text, values };
}

describe('containsCondition', () => {
  it('is the plain LIKE where the pattern holds no sigma', () => {
    fc.assert(
      fc.property(
        fc.string().filter((q) => !/[σςΣ]/.test(q)),
        (q) => {
          expect(condition(q)).toEqual({ text: 't LIKE $2', values: [containsPattern(q)] });
        },
      ),
    );
  });

  it('makes each sigma a wildcard for the index and decides on both sides folded to σ', () => {
    expect(condition('ΟΔΟΣ')).toEqual({
      text: "t LIKE $2 AND translate(t, 'ς', 'σ') LIKE $3",
      values: ['%οδο_%', '%οδοσ%'],
    });
    expect(condition('σ_ς%')).toEqual({
      text: "t LIKE $2 AND translate(t, 'ς', 'σ') LIKE $3",
      values: ['%_\\__\\%%', '%σ\\_σ\\%%'],
    });
  });
});
