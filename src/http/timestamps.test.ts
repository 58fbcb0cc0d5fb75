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

  it('takes a leap second where one is inserted, 23:59:60 UTC at the end of June or December, as the next second', () => {
    expect(parseRfc3339('2016-12-31T23:59:60Z')).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parseRfc3339('2016-12-31T18:59:60-05:00')).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parseRfc3339('2017-01-01T05:29:60+05:30')).toBe(Date.parse('2017-01-01T00:00:00Z'));
    expect(parseRfc3339('2015-06-30T23:59:60.25Z')).toBe(Date.parse('2015-07-01T00:00:00.250Z'));
    expect(parseRfc3339('2030-06-30T23:59:60Z')).toBe(Date.parse('2030-07-01T00:00:00Z'));
    for (const bad of [
      '2024-05-05T10:10:60Z',
      '2016-12-31T23:59:60+01:00',
      '2016-12-31T23:59:61Z',
      // The end of a UTC day, and of a month, but not where leap seconds are inserted.
      '2024-05-05T23:59:60Z',
      '2024-03-31T23:59:60Z',
      '2024-09-30T23:59:60Z',
      '2024-06-29T23:59:60Z',
      // 10000-01-01 has no RFC 3339 form.
      '9999-12-31T23:59:60Z',
    ]) {
      expect(parseRfc3339(bad), bad).toBeNull();
    }
  });

  it('takes :60 exactly where it is 23:59:60 UTC on 30 June or 31 December, in any offset', () => {
    const DAY = 86_400_000;
    const YEAR_MS = { min: Date.UTC(2000, 0, 1) - 730119 * DAY, max: Date.UTC(9999, 11, 31) };
    // The instant the :60 would map to: mostly the start of a month (1 July and 1 January
    // among them, where it is taken), else any minute.
    const monthStart = fc
      .record({ year: fc.integer({ min: 1, max: 9999 }), month: fc.integer({ min: 0, max: 11 }) })
      .map(({ year, month }) => {
        const date = new Date(0);
        date.setUTCFullYear(year, month, 1);
        return date.getTime();
      });
    const anyMinute = fc
      .integer({ min: YEAR_MS.min / 60_000, max: YEAR_MS.max / 60_000 })
      .map((minute) => minute * 60_000);
    const offsetMinutes = fc.oneof(fc.constant(0), fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }));
    fc.assert(
      fc.property(
        fc.oneof(monthStart, anyMinute),
        fc.integer({ min: 0, max: 999 }),
        offsetMinutes,
        (next, millis, offset) => {
          const local = new Date(next - 1000 + millis + offset * 60_000).toISOString();
          fc.pre(/^\d{4}-/.test(local));
          const sign = offset < 0 ? '-' : '+';
          const zone = `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
          const text = `${local.slice(0, 17)}60${local.slice(19, 23)}${zone}`;
          const date = new Date(next);
          const leap =
            date.getUTCDate() === 1 &&
            (date.getUTCMonth() === 0 || date.getUTCMonth() === 6) &&
            next % DAY === 0 &&
            next + millis <= Date.parse('9999-12-31T23:59:59.999Z');
          expect(parseRfc3339(text), text).toBe(leap ? next + millis : null);
        },
      ),
    );
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

const pad = (n: number) => String(n).padStart(2, '0');
