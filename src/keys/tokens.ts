import { errors, jwtVerify, SignJWT } from 'jose';
import { SIGNING_ALGORITHM, type SigningKey } from './signing-key.js';

/** What a token is for: API keys authenticate /api/v1, sessions only /internal/. */
export type TokenUse = 'api_key' | 'session';

export interface TokenClaims {
  use: TokenUse;
  /** The API key's or the session's UUID (`sub`). */
  id: string;
  orgId: number;
  scopes: string[];
  /** Epoch seconds, when the token expires. */
  expiresAt?: number;
}

export type VerifyResult =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: 'invalid' }
  /** Signature and audience are good but `exp` has passed. */
  | { ok: false; reason: 'expired'; claims: TokenClaims };

const ISSUER = 'tagtrail';

function claimsOf(payload: Record<string, unknown>): TokenClaims | null {
  const { sub, org, scp, use, exp } = payload;
  if (typeof sub !== 'string' || typeof org !== 'number' || !Number.isSafeInteger(org)) return null;
  if (!Array.isArray(scp) || !scp.every((s) => typeof s === 'string')) return null;
  if (use !== 'api_key' && use !== 'session') return null;
  return { use, id: sub, orgId: org, scopes: scp, expiresAt: typeof exp === 'number' ? exp : undefined };
}

/**
 * Signs and verifies the deployment's tokens. The audience names the environment, so a
 * key minted for preview does not authenticate against production, and the reverse.
 */
export class TokenCodec {
  private readonly audience: string;
  /**
   * Tokens whose signature, issuer and audience have been verified, with their claims:
   * a client sends the same token on every call, and an Ed25519 verification per request
   * costs more than the rest of authentication. Only genuine tokens get here; the expiry
   * is checked again on each use, as jose does (whole seconds, `exp <= now` is expired).
   */
  private readonly verified = new Map<string, TokenClaims>();
  constructor(
    private readonly key: SigningKey,
    readonly environment: 'production' | 'preview',
  ) {
    this.audience = `tagtrail:${environment}`;
  }

  sign(claims: TokenClaims, environment = this.environment): Promise<string> {
    const jwt = new SignJWT({ org: claims.orgId, scp: claims.scopes, use: claims.use })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: this.key.kid, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(`tagtrail:${environment}`)
      .setSubject(claims.id)
      .setIssuedAt();
    if (claims.expiresAt !== undefined) jwt.setExpirationTime(claims.expiresAt);
    return jwt.sign(this.key.privateKey);
  }

  async verify(token: string): Promise<VerifyResult> {
    const known = this.verified.get(token);
    if (known) {
      const expired = known.expiresAt !== undefined && known.expiresAt <= Math.floor(Date.now() / 1000);
      return expired ? { ok: false, reason: 'expired', claims: known } : { ok: true, claims: known };
    }
    try {
      const { payload } = await jwtVerify(token, this.key.publicKey, {
        algorithms: [SIGNING_ALGORITHM],
        issuer: ISSUER,
        audience: this.audience,
      });
      const claims = claimsOf(payload);
      if (claims) {
        if (this.verified.size >= 10_000) this.verified.clear();
        this.verified.set(token, claims);
      }
      return claims ? { ok: true, claims } : { ok: false, reason: 'invalid' };
    } catch (err) {
      // jose checks the signature before the claims, so an expiry error means a genuine token.
      if (err instanceof errors.JWTExpired) {
        const claims = claimsOf(err.payload);
        const audience = err.payload.aud;
        const audOk =
          audience === this.audience || (Array.isArray(audience) && audience.includes(this.audience));
        if (claims && audOk && err.payload.iss === ISSUER) return { ok: false, reason: 'expired', claims };
      }
      return { ok: false, reason: 'invalid' };
    }
  }
}
