import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens: HMAC-SHA256 of the session id, keyed by a key derived (HKDF) from the
 * deployment's signing key (its private scalar, SigningKey.secret). Every instance derives the
 * same key from the database's signing key, a token is bound to one session, and nothing
 * extra is stored.
 */
export class CsrfTokens {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: Uint8Array): CsrfTokens {
    return new CsrfTokens(Buffer.from(hkdfSync('sha256', secret, 'tagtrail', 'csrf-token-v1', 32)));
  }

  tokenFor(sessionId: string): string {
    return createHmac('sha256', this.key).update(`session:${sessionId}`).digest('base64url');
  }

  /** Constant-time comparison of a presented token with the session's. */
  verify(sessionId: string, presented: string | undefined): boolean {
    if (typeof presented !== 'string') return false;
    const expected = Buffer.from(this.tokenFor(sessionId), 'utf8');
    const given = Buffer.from(presented, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
