import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { toWire } from '../http/timestamps.js';
import { WIRE_INSTANTS, wireInstantOf } from './wire-instants.js';

const parse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;
/** What the rows carried before: node-postgres's Date, printed by toWire. */
const viaDate = (text: string) => toWire(parse(text));

function expectSameAsDate(texts: string[]): void {
  for (const text of texts) expect(wireInstantOf(text), text).toBe(viaDate(text));
}

/** PostgreSQL's text of an instant in UTC: microseconds with trailing zeros dropped. */
function postgresText(millis: number, micros: number): string {
  const iso = new Date(millis).toISOString();
  const fraction = `${iso.slice(20, 23)}${String(micros).padStart(3, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

describe('wireInstantOf', () => {
  it('writes what a Date would, for the shapes the server sends in UTC', () => {
    expectSameAsDate([
      '2026-11-29 06:50:59.022758+00',
      '2026-11-29 06:50:59+00',
      '2026-01-01 00:00:00.5+00',
      '2026-01-01 00:00:00.05+00',
      '2026-01-01 00:00:00.123+00',
      '2026-01-01 00:00:00.1239+00',
      '2026-01-01 00:00:00.999999+00',
      '0001-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999+00',
    ]);
    expect(wireInstantOf('2026-11-29 06:50:59.022758+00')).toBe('2026-11-29T06:50:59.022Z');
  });

  it('falls back to the Date for offsets, BC years and years past 9999', () => {
    expectSameAsDate([
      '2026-11-29 07:50:59.5+01',
      '2026-11-29 01:20:59.123456-05:30',
      '2026-11-29 06:50:59+00:00:12',
      '0044-03-15 12:00:00+00 BC',
      '12026-11-29 06:50:59+00',
    ]);
    expect(wireInstantOf('2026-11-29 07:50:59.5+01')).toBe('2026-11-29T06:50:59.500Z');
  });

  it('fails on infinity as the Date did', () => {
    expect(() => viaDate('infinity')).toThrow(RangeError);
    expect(() => wireInstantOf('infinity')).toThrow(RangeError);
  });

  it('agrees with the Date for any instant of years 1 to 9999 (property)', () => {
    const min = Date.UTC(2000, 0, 1) - 730119 * 86400000;
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    fc.assert(
      fc.property(fc.integer({ min, max }), fc.integer({ min: 0, max: 999 }), (millis, micros) => {
        const text = postgresText(millis, micros);
        expect(wireInstantOf(text)).toBe(viaDate(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads only timestamptz so, every other type as node-postgres does', () => {
    expect(WIRE_INSTANTS.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text')).toBe(wireInstantOf);
    for (const oid of [pg.types.builtins.INT8, pg.types.builtins.TIMESTAMP, pg.types.builtins.JSONB]) {
      expect(WIRE_INSTANTS.getTypeParser(oid, 'text')).toBe(pg.types.getTypeParser(oid, 'text'));
    }
  });
});
