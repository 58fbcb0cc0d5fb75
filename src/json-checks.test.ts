import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heldExactly, inexactLiteral, noteInexactNumbers } from './json-checks.js';

describe('heldExactly', () => {
  it('is true for what JSON.stringify prints of any double, in any spelling of the same value', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        expect(heldExactly(JSON.stringify(d))).toBe(true);
      }),
    );
    for (const literal of [
      '0',
      '-0',
      '1.0',
      '1E2',
      '0.50000000000000000000',
      '1e21',
      '0.30000000000000004',
    ]) {
      expect(heldExactly(literal), literal).toBe(true);
    }
  });

  it('is false where the stored number would be another one', () => {
    for (const literal of [
      '9007199254740993',
      '1152921504606846976',
      '12345678901234567',
      '0.1000000000000000055511151231257827',
      '1e-400',
      '1e400',
    ]) {
      expect(heldExactly(literal), literal).toBe(false);
    }
  });

  it('agrees with BigInt on integers', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), (n) => {
        const printed = BigInt(JSON.stringify(Number(n)));
        expect(heldExactly(String(n))).toBe(printed === n);
      }),
    );
  });
});

describe('noteInexactNumbers', () => {
  const decoded = (text: string) => {
    const value = JSON.parse(text);
    noteInexactNumbers(text, value);
    return value;
  };

  it('names the container and key of each number not held exactly, in objects and arrays', () => {
    const v = decoded(
      '{"a":1,"m":{"id":9007199254740993,"l":[1,"x",[true,null,12345678901234567]]},"k":"9007199254740993"}',
    );
    expect(inexactLiteral(v.m, 'id')).toBe('9007199254740993');
    expect(inexactLiteral(v.m.l[2], '2')).toBe('12345678901234567');
    expect(inexactLiteral(v, 'a')).toBeUndefined();
    expect(inexactLiteral(v, 'k')).toBeUndefined();
    expect(inexactLiteral(v.m.l, '0')).toBeUndefined();
  });

  it('reads keys with escapes, and takes the last of a key sent twice, as JSON.parse does', () => {
    const v = decoded('{"m":{"a\\"b":9007199254740993,"x":9007199254740993,"x":1,"y":2,"y":1e-400}}');
    expect(inexactLiteral(v.m, 'a"b')).toBe('9007199254740993');
    expect(inexactLiteral(v.m, 'x')).toBeUndefined();
    expect(inexactLiteral(v.m, 'y')).toBe('1e-400');
    const w = decoded('{"m":{"a":9007199254740993},"m":{"a":"text"}}');
    expect(inexactLiteral(w.m, 'a')).toBeUndefined();
  });
});

describe('noteInexactNumbers against generated documents', () => {
  // Leaves are JSON values or number literals written as text (some beyond a double).
  const literal = fc.oneof(
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.tuple(fc.integer(), fc.stringMatching(/^\d{1,30}$/)).map(([i, f]) => `${i}.${f}`),
    fc.constantFrom('1e-400', '-0', '1E2', '0.1000000000000000055511151231257827'),
  );
  type Doc = { literal: string } | string | boolean | null | Doc[] | { [key: string]: Doc };
  const { doc } = fc.letrec<{ doc: Doc }>((tie) => ({
    doc: fc.oneof(
      { depthSize: 'small' },
      literal.map((l) => ({ literal: l })),
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('doc'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 4 }), tie('doc'), { maxKeys: 4 }).map((o) => ({ object: o })),
    ) as fc.Arbitrary<Doc>,
  }));
  const isLiteral = (d: Doc): d is { literal: string } =>
    d !== null && typeof d === 'object' && !Array.isArray(d) && 'literal' in d;
  const write = (d: Doc): string => {
    if (isLiteral(d)) return d.literal;
    if (Array.isArray(d)) return `[${d.map(write).join(',')}]`;
    if (d !== null && typeof d === 'object') {
      const o = (d as { object: Record<string, Doc> }).object;
      return `{${Object.entries(o)
        .map(([k, v]) => `${JSON.stringify(k)}:${write(v)}`)
        .join(',')}}`;
    }
    return JSON.stringify(d);
  };
  /** Checks every literal of `d` against the note on its place in `value`. */
  const check = (d: Doc, value: unknown, parent: object | null, key: string) => {
    if (isLiteral(d)) {
      if (parent) expect(inexactLiteral(parent, key)).toBe(heldExactly(d.literal) ? undefined : d.literal);
    } else if (Array.isArray(d)) {
      for (const [i, c] of d.entries()) check(c, (value as unknown[])[i], value as object, String(i));
    } else if (d !== null && typeof d === 'object') {
      for (const [k, c] of Object.entries((d as { object: Record<string, Doc> }).object))
        check(c, (value as Record<string, unknown>)[k], value as object, k);
    }
  };

  it('notes exactly the literals not held exactly, each at its own place', () => {
    fc.assert(
      fc.property(doc, (d) => {
        const text = write(d);
        const value = JSON.parse(text);
        noteInexactNumbers(text, value);
        check(d, value, null, '');
      }),
      { numRuns: 300 },
    );
  });
});
