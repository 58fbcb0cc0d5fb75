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
  it('is the plain LIKE, the pattern as it is, where the pattern is ASCII', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (q) => {
        expect(condition(q)).toEqual({ text: 't LIKE $2', values: [containsPattern(q)] });
      }),
    );
  });

  it('leaves all but ASCII letters for the database to lower-case, as it lower-cased the text', () => {
    expect(containsPattern('AbÄ_Ɤ%')).toBe('%abÄ\\_Ɤ\\%%');
    expect(condition('Ɤ')).toEqual({
      text: 't LIKE (lower($2 COLLATE "und-x-icu") COLLATE "default")',
      values: ['%Ɤ%'],
    });
    const values: string[] = [];
    const text = containsCondition('e', containsPattern('é'), (v) => `$${values.push(v) + 1}`, 'und-x-icu');
    expect(text).toBe('e LIKE (lower($2 COLLATE "und-x-icu") COLLATE "und-x-icu")');
  });

  it('makes each sigma a wildcard for the index and decides on both sides folded to σ', () => {
    const lower = (n: number) => `(lower($${n} COLLATE "und-x-icu") COLLATE "default")`;
    expect(condition('ΟΔΟΣ')).toEqual({
      text: `t LIKE ${lower(2)} AND translate(t, 'ς', 'σ') LIKE translate(${lower(3)}, 'ς', 'σ')`,
      values: ['%ΟΔΟ_%', '%ΟΔΟΣ%'],
    });
    expect(condition('σ_ς%')).toEqual({
      text: `t LIKE ${lower(2)} AND translate(t, 'ς', 'σ') LIKE translate(${lower(3)}, 'ς', 'σ')`,
      values: ['%_\\__\\%%', '%σ\\_ς\\%%'],
    });
  });
});
