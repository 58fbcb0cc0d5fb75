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
