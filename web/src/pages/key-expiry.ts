/** The expiry the keys page sends for the choice made, and the dates it offers. */

export type Expiry = 'never' | '30' | '90' | '365' | 'date';

const DAY = 86_400_000;

/** The expiry to send: null (never), now + N days, or the end of the chosen day (local time). */
export function expiresAt(expiry: Expiry, date: string, now = Date.now()): string | null {
  if (expiry === 'never') return null;
  if (expiry === 'date') {
    const [y, m, d] = date.split('-').map(Number);
    if (!y || !m || !d) throw new Error('Choose the date the key expires.');
    return new Date(y, m - 1, d, 23, 59, 59, 999).toISOString();
  }
  return new Date(now + Number(expiry) * DAY).toISOString();
}

/**
 * The longest lifetime the service mints a key with (src/keys/service.ts
 * MAX_KEY_LIFETIME_SECONDS: 3650 days, not ten calendar years), which the web app cannot
 * import; test/web/key-expiry.test.ts holds the two equal.
 */
export const KEY_LIFETIME_MS = 10 * 365 * DAY;

const localDate = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

export const today = () => localDate(new Date(Date.now() + DAY));

/**
 * The last day the date field offers: the latest whose end (what `expiresAt` sends) the
 * service still takes. The field offered any date, and one ten calendar years ahead, which
 * reads as allowed, was refused after the whole form was filled in ("expires_at must be at
 * most ten years from now"): 3650 days fall two or three leap days short of that.
 */
export function lastExpiryDate(now = Date.now()): string {
  const limit = new Date(now + KEY_LIFETIME_MS);
  const end = new Date(limit.getFullYear(), limit.getMonth(), limit.getDate(), 23, 59, 59, 999);
  // The service compares whole seconds.
  if (Math.floor(end.getTime() / 1000) <= Math.floor(limit.getTime() / 1000)) return localDate(limit);
  return localDate(new Date(limit.getFullYear(), limit.getMonth(), limit.getDate() - 1));
}
