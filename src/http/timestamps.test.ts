import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSentinelInstant, outOfRange, parseRfc3339, toWire } from './timestamps.js';

describe('parseRfc3339', () => {
  it('accepts 0 to 9 fractional digits and truncates below the millisecond', () => {
    expect(toWire(parseRfc3339('2024-05-06T07:08:09Z')!)).toBe('2024-05-06T07:08:09.000Z');
    expect(toWire(parseRfc3339('2024-05-06T07:08:09.1Z')!)).toBe('2024-05-06T07:08:09.100Z');
    expect(toWire(parseRfc3339('2024-05-06T07:08:09.123999999Z')!)).toBe('2024-05-06T07:08:09.123Z');
  });

  it('applies offsets', () => {
    expect(toWire(parseRfc3339('2024-05-06T09:08:09.5+02:00')!)).toBe('2024-05-06T07:08:09.500Z');
    expect(toWire(parseRfc3339('2024-05-06T00:30:00-01:30')!)).toBe('2024-05-06T02:00:00.000Z');
  });

  it('rejects what is not RFC 3339', () => {
    for (const bad of [
      '',
      '2024-05-06',
      '2024/05/06T07:08:09Z',
      '2024-05-06T07:08:09',
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:00:00.1234567890Z',
      '2024-01-01T00:00:00+0200',
      '0000-12-31T23:59:59Z',
      '9999-12-31T23:59:59-00:01',
      '0001-01-01T00:00:00+00:01',
    ]) {
      expect(parseRfc3339(bad), bad).toBeNull();
    }
  });

  it('takes a leap second where one is inserted, 23:59:60 UTC, as the first second of the next day', () => {
    expect(parseRfc3339('2016-12-31T23:59:60Z')).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parseRfc3339('2016-12-31T18:59:60-05:00')).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parseRfc3339('2015-06-30T23:59:60.25Z')).toBe(Date.parse('2015-07-01T00:00:00.250Z'));
    for (const bad of ['2024-05-05T10:10:60Z', '2016-12-31T23:59:60+01:00', '2016-12-31T23:59:61Z']) {
      expect(parseRfc3339(bad), bad).toBeNull();
    }
  });

  it('tells an instant out of range from a bad form', () => {
    expect(outOfRange('0000-12-31T23:59:59Z')).toBe(true);
    expect(outOfRange('0001-01-01T00:30:00+01:00')).toBe(true);
    expect(outOfRange('9999-12-31T23:59:59-00:01')).toBe(true);
    expect(outOfRange('0001-01-01T00:00:00Z')).toBe(false);
    expect(outOfRange('2024-02-30T00:00:00Z')).toBe(false);
    expect(outOfRange('yesterday')).toBe(false);
  });

  it('recognises both sentinel instants in any offset', () => {
    expect(isSentinelInstant(parseRfc3339('0001-01-01T00:00:00Z')!)).toBe(true);
    expect(isSentinelInstant(parseRfc3339('1970-01-01T00:00:00Z')!)).toBe(true);
    expect(isSentinelInstant(parseRfc3339('1970-01-01T02:00:00+02:00')!)).toBe(true);
    expect(isSentinelInstant(parseRfc3339('0001-01-01T00:00:00.000000001Z')!)).toBe(true);
    expect(isSentinelInstant(parseRfc3339('1970-01-01T00:00:00.001Z')!)).toBe(false);
  });

  it('round-trips every millisecond instant through the wire form', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62135596800000, max: 253402300799999 }), (ms) => {
        expect(parseRfc3339(toWire(ms))).toBe(ms);
      }),
    );
  });
});
