import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchKey } from './resolve.js';

/** migration 0005's normalisation, as matchKey first wrote it. */
const reference = (tagType: 'rfid' | 'ble' | 'barcode', value: string): string => {
  if (tagType === 'barcode') return value;
  const compact = value
    .replace(/[\s:-]/g, '')
    .toUpperCase()
    .replace(/^0+/, '');
  return compact === '' ? '0' : compact;
};

describe('matchKey', () => {
  it('normalises as the match_key column does, whatever the value', () => {
    const value = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFabcdef :-'), maxLength: 30 }),
      fc.string({ maxLength: 20 }),
      fc.string({ unit: 'grapheme', maxLength: 10 }),
    );
    fc.assert(
      fc.property(fc.constantFrom('rfid', 'ble', 'barcode') as fc.Arbitrary<'rfid'>, value, (type, v) => {
        expect(matchKey(type, v)).toBe(reference(type, v));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps an EPC already in its match form, and strips what the column strips', () => {
    expect(matchKey('rfid', 'E28011700000020A1B2C3D4E')).toBe('E28011700000020A1B2C3D4E');
    expect(matchKey('rfid', '00e2 80-11:70')).toBe('E2801170');
    expect(matchKey('ble', 'AA:BB:CC:00:11:22')).toBe('AABBCC001122');
    expect(matchKey('rfid', '000')).toBe('0');
    expect(matchKey('rfid', '')).toBe('0');
    expect(matchKey('barcode', ' 0a-b ')).toBe(' 0a-b ');
  });
});
