import {
  type ApiCaller,
  type CredentialHeaders,
  type KeyConfirmation,
  type Principal,
  type PublicAuthenticator,
  StaleKeyError,
} from '../auth-types.js';
import type { Database } from '../db/pool.js';
import { withTransactionGuard } from '../db/transaction-guard.js';
import { ApiError } from '../errors.js';
import type { ApiKeyCache } from './key-cache.js';
import { type AuthKeyRecord, FIND_API_KEY, findApiKey, touchApiKey } from './repository.js';
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
  /**
   * Confirm a cached key inside the work's first transaction instead of by the LISTEN
   * barrier (docs/performance.md, step 9). Off: measured, it costs more node CPU per
   * request (AsyncLocalStorage on every promise) than the shared barrier does.
   */
  confirmInTransaction = false;

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

  private async record(orgId: number, id: string): Promise<AuthKeyRecord | null> {
    const cached = await this.cache?.get(id);
    if (cached) return cached.orgId === orgId ? cached : null;
    const ticket = this.cache?.startRead();
    // The one lookup made before the organization is trusted: it is keyed by the signed
    // claims and filtered on the organization they name.
    const record = await this.db.readWithOrg(orgId, (tx) => findApiKey(tx, orgId, id));
    if (record) this.cache?.store(ticket, record);
    return record;
  }

  async authenticate(verified: VerifyResult): Promise<Principal> {
    if (!verified.ok && verified.reason === 'invalid') throw unauthorized(AUTH_DETAIL.invalid);
    const claims: TokenClaims = verified.claims;
    if (claims.use !== 'api_key') throw unauthorized(AUTH_DETAIL.invalid);
    const cached = this.confirmInTransaction ? this.cache?.peek(claims.id) : undefined;
    if (cached && cached.orgId === claims.orgId) {
      // Admitted on the cached record with no round trip: the route's work confirms it.
      // A refusal is only ever given on a record read after the request arrived (below).
      const principal = this.admit(verified, cached);
      if (principal) {
        principal.confirmation = this.confirmation(verified, cached);
        return principal;
      }
    }
    return this.decide(verified, await this.record(claims.orgId, claims.id));
  }

  /** The principal of a record, or the 401 that refuses it. */
  private decide(verified: VerifyResult, record: AuthKeyRecord | null): Principal {
    if (!record || record.environment !== this.tokens.environment) throw unauthorized(AUTH_DETAIL.invalid);
    if (record.revokedAt) throw unauthorized(AUTH_DETAIL.revoked);
    if (!verified.ok || (record.expiresAt && record.expiresAt.getTime() <= Date.now())) {
      throw unauthorized(AUTH_DETAIL.expired);
    }
    this.touch(record.orgId, record.id);
    return {
      orgId: record.orgId,
      orgName: record.orgName,
      keyId: record.id,
      keyName: record.name,
      scopes: new Set(record.scopes),
    };
  }

  private admit(verified: VerifyResult, record: AuthKeyRecord): Principal | undefined {
    try {
      return this.decide(verified, record);
    } catch {
      return undefined;
    }
  }

  /**
   * The check of a cached record folded into the work's first transaction: the record is
   * read again in that transaction's snapshot, taken after the request arrived, so a
   * revocation committed before it, on any instance, is seen there (the same promise as the
   * LISTEN barrier, without its round trip). Work that runs no transaction (GET /orgs/me)
   * reads the record once more after it, in a snapshot of its own: this mode does not trust
   * the listener, so that check does not either.
   */
  private confirmation(verified: VerifyResult, cached: AuthKeyRecord): KeyConfirmation {
    const stale = () => {
      this.cache?.forget(cached.id);
      return new StaleKeyError();
    };
    const guard = {
      orgId: cached.orgId,
      query: { name: FIND_API_KEY.name, text: FIND_API_KEY.text, values: [cached.orgId, cached.id] },
      verify: (rows: unknown[]) => {
        if (!sameRecord(rows[0] as AuthKeyRecord | undefined, cached)) throw stale();
      },
    };
    const read = () => this.db.readWithOrg(cached.orgId, (tx) => findApiKey(tx, cached.orgId, cached.id));
    const settle = async () => {
      if (!sameRecord((await read()) ?? undefined, cached)) throw stale();
    };
    return {
      run: (work) => withTransactionGuard(guard, settle, work),
      fresh: async () => this.decide(verified, await read()),
    };
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

/** Whether the database's record still is the cached one, in everything a request depends on. */
function sameRecord(now: AuthKeyRecord | undefined, cached: AuthKeyRecord): boolean {
  const time = (d: Date | null) => (d === null ? null : d.getTime());
  return (
    now !== undefined &&
    now.id === cached.id &&
    now.orgId === cached.orgId &&
    now.orgName === cached.orgName &&
    now.name === cached.name &&
    now.environment === cached.environment &&
    time(now.revokedAt) === time(cached.revokedAt) &&
    time(now.expiresAt) === time(cached.expiresAt) &&
    now.scopes.length === cached.scopes.length &&
    now.scopes.every((scope, i) => scope === cached.scopes[i])
  );
}
