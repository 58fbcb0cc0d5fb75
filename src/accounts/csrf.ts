import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/pool.js';

/**
 * CSRF tokens: HMAC-SHA256 of the session id, keyed by a key derived (HKDF) from the
 * deployment's signing key. Every instance derives the same key from the database, a
 * token is bound to one session, and nothing extra is stored.
 */
export class CsrfTokens {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: Uint8Array): CsrfTokens {
    return new CsrfTokens(Buffer.from(hkdfSync('sha256', secret, 'tagtrail', 'csrf-token-v1', 32)));
  }

  /** Derives the key from the signing key stored in the database (loaded by then). */
  static async fromDatabase(db: Database): Promise<CsrfTokens> {
    const { rows } = await db.pool.query<{ d: string | null }>(
      `SELECT private_jwk->>'d' AS d FROM signing_keys ORDER BY created_at, id LIMIT 1`,
    );
    const d = rows[0]?.d;
    if (!d) throw new Error('no signing key to derive the CSRF key from');
    return CsrfTokens.fromSecret(Buffer.from(d, 'base64url'));
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
