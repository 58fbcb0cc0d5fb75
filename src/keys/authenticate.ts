import type { ApiCaller, CredentialHeaders, Principal, PublicAuthenticator } from '../auth-types.js';
import type { Database } from '../db/pool.js';
import { ApiError } from '../errors.js';
import type { ApiKeyCache } from './key-cache.js';
import { type ApiKeyRecord, findApiKey, touchApiKey } from './repository.js';
import type { TokenClaims, TokenCodec, VerifyResult } from './tokens.js';

export type { CredentialHeaders, Principal };

/** The exact 401 details of API-SPEC Authentication 8. */
export const AUTH_DETAIL = {
  missing: 'Missing authorization header',
  format: 'Invalid authorization header format',
  invalid: 'Invalid or expired token',
  revoked: 'API key has been revoked',
  expired: 'API key has expired',
  xApiKey: 'Use Authorization: Bearer <token>',
} as const;

const unauthorized = (detail: string) => new ApiError('unauthorized', detail);

/** The bearer token of a request, or the 401 explaining why there is none. */
export function bearerToken(headers: CredentialHeaders): string | ApiError {
  if (headers.authorization === undefined) {
    return unauthorized(headers.xApiKey !== undefined ? AUTH_DETAIL.xApiKey : AUTH_DETAIL.missing);
  }
  const match = /^Bearer +([^\s]+) *$/i.exec(headers.authorization);
  return match?.[1] ?? unauthorized(AUTH_DETAIL.format);
}

/**
 * Checks a verified token against its key record on every request, so a revocation
 * takes effect on the next call. Session tokens never authenticate the public API.
 * The record comes from the cache when it can vouch that it is current (see ApiKeyCache:
 * invalidated by LISTEN/NOTIFY, behind a barrier), from the database otherwise.
 */
export class ApiKeyAuthenticator implements PublicAuthenticator {
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly db: Database,
    readonly tokens: TokenCodec,
    readonly cache?: ApiKeyCache,
  ) {}

  /**
   * The caller of a public request: its token is verified (signature and expiry, no
   * database) up front so that a valid API key is rate-limited per key, not per address.
   */
  async identify(credentials: CredentialHeaders): Promise<ApiCaller> {
    const token = bearerToken(credentials);
    const verified = typeof token === 'string' ? await this.tokens.verify(token) : undefined;
    return {
      bucket: verified?.ok && verified.claims.use === 'api_key' ? `key:${verified.claims.id}` : undefined,
      authenticate: async () => {
        if (token instanceof ApiError) throw token;
        return this.authenticate(verified as VerifyResult);
      },
    };
  }

  close(): Promise<void> {
    return this.cache?.close() ?? Promise.resolve();
  }

  private async record(orgId: number, id: string): Promise<ApiKeyRecord | null> {
    const cached = await this.cache?.get(id);
    if (cached) return cached.orgId === orgId ? cached : null;
    const ticket = this.cache?.startRead();
    // The one lookup made before the organization is trusted: it is keyed by the signed
    // claims and filtered on the organization they name.
    const record = await this.db.withOrg(orgId, (tx) => findApiKey(tx, orgId, id));
    if (record) this.cache?.store(ticket, record);
    return record;
  }

  async authenticate(verified: VerifyResult): Promise<Principal> {
    if (!verified.ok && verified.reason === 'invalid') throw unauthorized(AUTH_DETAIL.invalid);
    const claims: TokenClaims = verified.claims;
    if (claims.use !== 'api_key') throw unauthorized(AUTH_DETAIL.invalid);
    const record = await this.record(claims.orgId, claims.id);
    if (!record || record.environment !== this.tokens.environment) throw unauthorized(AUTH_DETAIL.invalid);
    if (record.revokedAt) throw unauthorized(AUTH_DETAIL.revoked);
    if (!verified.ok || (record.expiresAt && record.expiresAt.getTime() <= Date.now())) {
      throw unauthorized(AUTH_DETAIL.expired);
    }
    this.touch(record.orgId, record.id);
    return { orgId: record.orgId, keyId: record.id, scopes: new Set(record.scopes) };
  }

  /** Records `last_used_at` at most once a minute per key, off the request's path. */
  private touch(orgId: number, keyId: string): void {
    const now = Date.now();
    if ((this.lastTouched.get(keyId) ?? 0) > now - 60_000) return;
    this.lastTouched.set(keyId, now);
    if (this.lastTouched.size > 100_000) this.lastTouched.clear();
    this.db.withOrg(orgId, (tx) => touchApiKey(tx, orgId, keyId)).catch(() => undefined);
  }
}
