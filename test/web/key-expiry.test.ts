/**
 * The keys page's "On a date…" field offers dates up to the last one the service takes
 * (web/src/pages/keys.tsx lastExpiryDate). It offered any date, and a date ten calendar
 * years ahead was refused only once sent: the service's limit is 3650 days
 * (src/keys/service.ts), two or three leap days short of ten years.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_KEY_LIFETIME_SECONDS } from '../../src/keys/service.js';
import { expiresAt, KEY_LIFETIME_MS, lastExpiryDate } from '../../web/src/pages/key-expiry.js';

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

/** The service's test (whole seconds) of an `expires_at` sent at `now`. */
const accepted = (now: number, iso: string) =>
  Math.floor(Date.parse(iso) / 1000) <= Math.floor(now / 1000) + MAX_KEY_LIFETIME_SECONDS;

const dayAfter = (date: string) => {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const next = new Date(y, m - 1, d + 1);
  return `${next.getFullYear()}-${String(next.getMonth() + 1).padStart(2, '0')}-${String(next.getDate()).padStart(2, '0')}`;
};

describe('the latest key expiry date the keys page offers', () => {
  it('is the lifetime the service allows', () => {
    expect(KEY_LIFETIME_MS).toBe(MAX_KEY_LIFETIME_SECONDS * 1000);
  });

  it('is a day the service takes, and the day after it is not', () => {
    for (const tz of ['UTC', 'Pacific/Auckland', 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati']) {
      process.env.TZ = tz;
      fc.assert(
        fc.property(
          fc.date({ min: new Date('2020-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }),
          (d) => {
            const now = d.getTime();
            const last = lastExpiryDate(now);
            expect(accepted(now, expiresAt('date', last, now)!), `${tz} ${d.toISOString()} ${last}`).toBe(
              true,
            );
            expect(accepted(now, expiresAt('date', dayAfter(last), now)!), `${tz} ${d.toISOString()}`).toBe(
              false,
            );
          },
        ),
        { numRuns: 300 },
      );
    }
  });

  it('is short of ten calendar years, as the 3650 days are', () => {
    process.env.TZ = 'Pacific/Auckland';
    // 2026-12-05 13:41 in Auckland: 3650 days on is 2036-12-02 13:41 there, so the end of
    // 2036-12-01 is the last to go; 2036-12-04 reads as within ten years, but is not.
    expect(lastExpiryDate(Date.parse('2026-12-05T00:41:00Z'))).toBe('2036-12-01');
  });
});
