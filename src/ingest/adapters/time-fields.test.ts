import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyReaderInstant, parseRfc3339, zuluInstant } from './time-fields.js';

describe('parseRfc3339', () => {
  const at = Date.UTC(2024, 5, 1, 12, 0, 0, 123);

  it.each([
    ['2024-06-01T12:00:00.123Z', at],
    ['2024-06-01T12:00:00.123+0000', at],
    ['2024-06-01T12:00:00.123+00:00', at],
    ['2024-06-01T14:00:00.123+02:00', at],
    ['2024-06-01T07:00:00.123-0500', at],
    ['2024-06-01T12:00:00.123456789Z', at],
    ['2024-06-01T12:00:00.1239Z', at],
    ['2024-06-01T12:00:00.12Z', Date.UTC(2024, 5, 1, 12, 0, 0, 120)],
    ['2024-06-01T12:00:00Z', Date.UTC(2024, 5, 1, 12, 0, 0)],
    ['2024-06-01t12:00:00z', Date.UTC(2024, 5, 1, 12, 0, 0)],
    ['2024-06-01 12:00:00Z', Date.UTC(2024, 5, 1, 12, 0, 0)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['0001-01-01T00:00:00Z', -62135596800000],
    ['0099-12-31T23:59:59.999Z', -59011459200001],
  ])('%s', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });

  it.each([
    '2024-06-01',
    '2024-06-01T12:00:00',
    '2024/06/01T12:00:00Z',
    '2024-13-01T12:00:00Z',
    '2023-02-29T12:00:00Z',
    '2024-04-31T12:00:00Z',
    '2024-06-01T24:00:00Z',
    '2024-06-01T12:60:00Z',
    '2024-06-01T12:00:00.Z',
    '2024-06-01T12:00:00+25:00',
    '2024-06-01T12:00:00+0060',
    '2024-06-01T12:00:00 Z',
    '',
    'yesterday',
  ])('refuses %j', (text) => {
    expect(parseRfc3339(text)).toBeNull();
  });
});

describe('the usual form read digit by digit (zuluInstant)', () => {
  // Texts near the usual form: each field now and then just out of its range, the
  // separators varied, and now and then one character replaced by something that breaks it.
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const nearText = fc
    .record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 0, max: 13 }),
      day: fc.integer({ min: 0, max: 32 }),
      hour: fc.integer({ min: 0, max: 24 }),
      minute: fc.integer({ min: 0, max: 60 }),
      second: fc.integer({ min: 0, max: 61 }),
      t: fc.constantFrom('T', 't', ' ', 'T', 'T'),
      fraction: fc.constantFrom('', '.', '.1', '.12', '.123', '.1234567891', '.1a', '.9999'),
      zone: fc.constantFrom('Z', 'z', 'Z', 'Z', '', ' ', '+00:00', 'Z '),
      broken: fc.option(fc.tuple(fc.nat(), fc.constantFrom('x', '-', ':', ' ', '.', '٣')), { freq: 4 }),
    })
    .map((f) => {
      const text = `${pad(f.year, 4)}-${pad(f.month, 2)}-${pad(f.day, 2)}${f.t}${pad(f.hour, 2)}:${pad(f.minute, 2)}:${pad(f.second, 2)}${f.fraction}${f.zone}`;
      if (!f.broken) return text;
      const at = f.broken[0] % text.length;
      return text.slice(0, at) + f.broken[1] + text.slice(at + 1);
    });
  const instants = fc.date({
    min: new Date('0100-01-01T00:00:00Z'),
    max: new Date('9999-12-31T23:59:59.999Z'),
    noInvalidDate: true,
  });

  it('answers as the general path wherever it answers at all', () => {
    let answered = 0;
    fc.assert(
      fc.property(nearText, (text) => {
        const fast = zuluInstant(text);
        if (fast !== undefined) {
          answered++;
          expect(fast).toBe(anyReaderInstant(text));
        }
        expect(parseRfc3339(text)).toBe(anyReaderInstant(text));
      }),
      { numRuns: 20_000 },
    );
    // The texts reach the fast path's answers, not only its refusals.
    expect(answered).toBeGreaterThan(1_000);
  });

  it('answers every instant written in the usual form, with or without its fraction', () => {
    fc.assert(
      fc.property(instants, fc.boolean(), (date, fraction) => {
        const text = fraction ? date.toISOString() : `${date.toISOString().slice(0, 19)}Z`;
        expect(zuluInstant(text)).toBe(fraction ? date.getTime() : Math.floor(date.getTime() / 1000) * 1000);
      }),
    );
  });
});
