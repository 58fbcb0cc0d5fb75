import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { hasIntegerBeyondInt64 } from '../json-checks.js';
import { decodeJsonBody, decodeJsonBytes } from './json-body.js';

describe('hasIntegerBeyondInt64', () => {
  it('finds integers past the int64 bounds only', () => {
    expect(hasIntegerBeyondInt64('{"a":9223372036854775807}')).toBe(false);
    expect(hasIntegerBeyondInt64('{"a":9223372036854775808}')).toBe(true);
    expect(hasIntegerBeyondInt64('{"a":-9223372036854775808}')).toBe(false);
    expect(hasIntegerBeyondInt64('{"a":-9223372036854775809}')).toBe(true);
    expect(hasIntegerBeyondInt64('[1, 2, 99999999999999999999999]')).toBe(true);
    expect(hasIntegerBeyondInt64('{"a":1e400,"b":123456789012345678901234.5}')).toBe(false);
    expect(hasIntegerBeyondInt64('{"a":"99999999999999999999999"}')).toBe(false);
    expect(hasIntegerBeyondInt64('{"a\\"":"x\\\\","b":99999999999999999999}')).toBe(true);
  });

  it('takes the digits of a fraction or an exponent as part of their number, not as integers', () => {
    expect(hasIntegerBeyondInt64('{"a":0.50000000000000000000}')).toBe(false);
    expect(hasIntegerBeyondInt64('{"a":-3.14159265358979323846264338}')).toBe(false);
    expect(hasIntegerBeyondInt64('{"a":1E+00000000000000000000002,"b":2e-99999999999999999999}')).toBe(false);
    expect(hasIntegerBeyondInt64('[0.1234567890123456789012,99999999999999999999]')).toBe(true);
  });

  it('finds no integer in any number that has a fraction or an exponent', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 40 });
    const fraction = fc.tuple(fc.nat(), digits).map(([n, d]) => `${n}.${d}`);
    const exponent = fc
      .tuple(fc.oneof(fc.nat().map(String), fraction), fc.constantFrom('e', 'E', 'e+', 'E-'), digits)
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fraction, exponent), fc.boolean(), (n, negative) => {
        expect(hasIntegerBeyondInt64(`{"v":[${negative ? '-' : ''}${n}]}`)).toBe(false);
      }),
    );
  });

  it('agrees with BigInt on every integer literal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (n) => {
        const outside = n > 9223372036854775807n || n < -9223372036854775808n;
        expect(hasIntegerBeyondInt64(`{"v":[${n}]}`)).toBe(outside);
      }),
    );
  });
});

describe('decodeJsonBody', () => {
  it('refuses lone surrogates in strings and keys, keeps paired ones', () => {
    expect(() => decodeJsonBody('{"name":"a\\ud800b"}')).toThrow(ApiError);
    expect(() => decodeJsonBody('{"\\udc00":1}')).toThrow(ApiError);
    expect(() => decodeJsonBody('{"m":{"x":["\\ud83d"]}}')).toThrow(ApiError);
    expect(decodeJsonBody('{"name":"\\ud83d\\ude00"}')).toEqual({ name: '😀' });
  });

  it('checks a body nested far deeper than the call stack without overflowing it', () => {
    const depth = 200_000;
    const deep = `{"m":${'['.repeat(depth)}"ok"${']'.repeat(depth)}}`;
    expect(decodeJsonBody(deep)).toHaveProperty('m');
    const bad = `{"m":${'{"a":'.repeat(depth)}"\\ud800"${'}'.repeat(depth)}}`;
    expect(() => decodeJsonBody(bad)).toThrow(ApiError);
  });

  it('rejects empty and invalid bodies as bad_request', () => {
    for (const text of ['', '  ', '{', '{"a":}', "{'a':1}"]) {
      expect(() => decodeJsonBody(text)).toThrow(ApiError);
    }
  });
});

describe('decodeJsonBytes', () => {
  it('refuses bytes that are not UTF-8 instead of reading them as U+FFFD', () => {
    for (const bad of [[0xff], [0xe9], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98]]) {
      const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bad), Buffer.from('"}')]);
      expect(() => decodeJsonBytes(bytes)).toThrow('Request body is not valid UTF-8');
    }
    expect(decodeJsonBytes(Buffer.from('{"name":"Zürich \ufffd 😀"}'))).toEqual({ name: 'Zürich \ufffd 😀' });
  });

  it('a byte order mark is not taken off: it is not JSON', () => {
    expect(() => decodeJsonBytes(Buffer.from('\ufeff{"name":"a"}'))).toThrow('not valid JSON');
  });
});
