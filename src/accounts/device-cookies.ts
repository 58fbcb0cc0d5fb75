import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** A device cookie is good for a year: a browser used now and then stays known. */
export const DEVICE_COOKIE_LIFETIME_SECONDS = 365 * 24 * 3600;

const NONCE = /^[A-Za-z0-9_-]{22}$/;
const EXPIRY = /^[0-9]{1,12}$/;

/**
 * The email as the sign-in limiter keys it: every spelling that signs in to one account
 * (users are found by PostgreSQL's `lower(email)`) must share one key, or each would bring
 * its own budget of guesses. JavaScript's lower case is not the database's: under a
 * glibc locale `lower('İ')` is `i` where JavaScript gives `i` and a combining dot, and a
 * capital sigma is always `σ` where JavaScript makes a word's last one `ς`. So the key is
 * coarser than either: compatibility forms folded (NFKC), lower case, final sigma as `σ`,
 * accents dropped (NFD, marks removed). Spellings that are distinct accounts may share a
 * budget; that errs toward fewer guesses.
 */
export const normalEmail = (email: string) =>
  email.trim().normalize('NFKC').toLowerCase().replace(/ς/g, 'σ').normalize('NFD').replace(/\p{M}/gu, '');

/**
 * Device cookies (OWASP "Slow down online guessing attacks with device cookies"): proof
 * that this browser signed in as this email before, so a stranger spending the email's
 * sign-in budget does not lock it out (SignInLimiter). The value is `nonce.expiry.mac`,
 * the MAC an HMAC-SHA256 of the normalised email, the nonce and the expiry under a key
 * derived (HKDF) from the deployment's signing key, as CSRF tokens are: every instance
 * checks it, nothing is stored, and the email is in the MAC, not in the cookie, so the
 * cookie neither names the person nor counts for anyone else.
 */
export class DeviceCookies {
  private constructor(
    private readonly key: Buffer,
    private readonly now: () => number,
  ) {}

  static fromSecret(secret: Uint8Array, now: () => number = Date.now): DeviceCookies {
    return new DeviceCookies(
      Buffer.from(hkdfSync('sha256', secret, 'tagtrail', 'device-cookie-v1', 32)),
      now,
    );
  }

  /** A new cookie value for a browser that just signed in as `email`. */
  issue(email: string): { value: string; maxAgeSeconds: number } {
    const nonce = randomBytes(16).toString('base64url');
    const expiry = Math.floor(this.now() / 1000) + DEVICE_COOKIE_LIFETIME_SECONDS;
    return {
      value: `${nonce}.${expiry}.${this.mac(email, nonce, expiry)}`,
      maxAgeSeconds: DEVICE_COOKIE_LIFETIME_SECONDS,
    };
  }

  /**
   * The device's id (its nonce, which names its own bucket) when `value` is a genuine,
   * unexpired cookie issued for `email`; null for anything else, including a good cookie
   * of another person.
   */
  deviceFor(value: string | undefined, email: string): string | null {
    if (value === undefined) return null;
    const [nonce, expiryText, mac, ...rest] = value.split('.');
    if (rest.length > 0 || !nonce || !expiryText || !mac || !NONCE.test(nonce) || !EXPIRY.test(expiryText)) {
      return null;
    }
    const expiry = Number(expiryText);
    if (expiry <= Math.floor(this.now() / 1000)) return null;
    const expected = Buffer.from(this.mac(email, nonce, expiry), 'utf8');
    const given = Buffer.from(mac, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected) ? nonce : null;
  }

  private mac(email: string, nonce: string, expiry: number): string {
    return createHmac('sha256', this.key)
      .update(`device:${normalEmail(email)}:${nonce}:${expiry}`)
      .digest('base64url');
  }
}
