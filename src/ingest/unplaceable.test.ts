import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../db/unavailable.js';
import { failsEveryTime, notPlaced } from './unplaceable.js';

const pgError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

describe('failsEveryTime', () => {
  it('is true of errors a redelivery would meet again', () => {
    for (const code of ['22001', '22P02', '23505', '23514', 'P0001', 'XX000']) {
      expect(failsEveryTime(pgError(code)), code).toBe(true);
    }
    expect(failsEveryTime(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(true);
    expect(failsEveryTime(new RangeError('Invalid time value'))).toBe(true);
  });

  it('is false of errors another attempt may pass, and of outages', () => {
    // Serialization failure, deadlock, transaction aborted (its cause unknown), statement
    // timeout, lock not available, too many connections, admin shutdown, a table or a
    // column not there (an upgrade under way), a privilege missing.
    for (const code of [
      '40001',
      '40P01',
      '25P02',
      '57014',
      '55P03',
      '53300',
      '57P01',
      '42P01',
      '42703',
      '42501',
    ]) {
      expect(failsEveryTime(pgError(code)), code).toBe(false);
    }
    expect(failsEveryTime(new DatabaseUnavailableError(new Error('connect ECONNREFUSED')))).toBe(false);
    expect(failsEveryTime(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(failsEveryTime(new Error('timeout exceeded when trying to connect'))).toBe(false);
    expect(failsEveryTime('a string')).toBe(false);
    expect(failsEveryTime(null)).toBe(false);
  });
});

describe('notPlaced', () => {
  it('counts the reads bad and says why once, cut to a readable length', () => {
    const placed = notPlaced(
      3,
      Object.assign(new Error(`value too long ${'x'.repeat(500)}`), { code: '22001' }),
    );
    expect(placed).toMatchObject({ good: 0, bad: 3, unknown: 0 });
    expect(placed.errors).toHaveLength(1);
    expect(placed.errors[0]!.text).toMatch(/^3 read\(s\) not placed: 22001 value too long x+$/);
    expect(placed.errors[0]!.text.length).toBeLessThanOrEqual(230);
  });
});
