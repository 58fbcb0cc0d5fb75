import { randomUUID } from 'node:crypto';
import type { Actor, Caller } from '../caller.js';
import type { Database } from '../db/pool.js';
import { ApiError, fieldError } from '../errors.js';
import { type ApiKeyListed, insertApiKey, listApiKeys, revokeApiKey } from './repository.js';
import { isMintableScope } from './scopes.js';
import type { TokenCodec } from './tokens.js';

export interface MintRequest {
  /** The organization the key is for, and who mints it (the activity log records them). */
  caller: Caller;
  name?: string;
  scopes: string[];
  /** Lifetime in seconds; undefined for a key that never expires. */
  expiresInSeconds?: number;
  /** Or the instant it expires (whole seconds are kept); exclusive with expiresInSeconds. */
  expiresAt?: Date;
  environment?: 'production' | 'preview';
  createdByUserId?: number | null;
}

export interface MintedKey {
  key: ApiKeyListed;
  /** The full key; shown once and never stored. */
  token: string;
}

/** Longest lifetime a key can be minted with: ten years. */
export const MAX_KEY_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

export class KeyService {
  constructor(
    private readonly db: Database,
    private readonly tokens: TokenCodec,
  ) {}

  async mint(req: MintRequest): Promise<MintedKey> {
    const scopes = [...new Set(req.scopes)].sort();
    const bad = scopes.find((s) => !isMintableScope(s));
    if (bad !== undefined) {
      throw fieldError('scopes', 'invalid_value', `scope ${bad} cannot be granted to an API key`, {
        allowed_values: ['assets:read', 'assets:write', 'locations:read', 'locations:write', 'tracking:read'],
      });
    }
    const name = (req.name ?? '').trim() || 'API key';
    if (name.length > 255)
      throw fieldError('name', 'too_long', 'name must be at most 255 characters', { max_length: 255 });
    const lifetime = req.expiresInSeconds;
    if (
      lifetime !== undefined &&
      (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > MAX_KEY_LIFETIME_SECONDS)
    ) {
      throw fieldError(
        'expires_in',
        'invalid_value',
        `expiry must be 1..${MAX_KEY_LIFETIME_SECONDS} seconds`,
        {
          min: 1,
          max: MAX_KEY_LIFETIME_SECONDS,
        },
      );
    }
    const environment = req.environment ?? this.tokens.environment;
    const id = randomUUID();
    // Whole seconds: the JWT `exp` and the record must name the same instant.
    const nowSeconds = Math.floor(Date.now() / 1000);
    let expiresAtSeconds = lifetime === undefined ? undefined : nowSeconds + lifetime;
    if (req.expiresAt !== undefined) {
      expiresAtSeconds = Math.floor(req.expiresAt.getTime() / 1000);
      if (expiresAtSeconds <= nowSeconds) {
        throw fieldError('expires_at', 'invalid_value', 'expires_at must be in the future');
      }
      if (expiresAtSeconds > nowSeconds + MAX_KEY_LIFETIME_SECONDS) {
        throw fieldError('expires_at', 'invalid_value', 'expires_at must be at most ten years from now', {
          max_seconds_from_now: MAX_KEY_LIFETIME_SECONDS,
        });
      }
    }
    const { orgId } = req.caller;
    const key = await this.db.withOrg(req.caller, async (tx) => {
      const org = await tx.query('SELECT 1 FROM organizations WHERE id = $1', [orgId]);
      if (!org.rowCount) throw new ApiError('not_found', `organization ${orgId} not found`);
      return insertApiKey(tx, orgId, {
        id,
        name,
        scopes,
        environment,
        expiresAt: expiresAtSeconds === undefined ? null : new Date(expiresAtSeconds * 1000),
        createdByUserId: req.createdByUserId,
      });
    });
    const token = await this.tokens.sign(
      { use: 'api_key', id, orgId, scopes, expiresAt: expiresAtSeconds },
      environment,
    );
    return { key, token };
  }

  async revoke(caller: Caller, keyId: string): Promise<ApiKeyListed> {
    const orgId = caller.orgId;
    const key = await this.db.withOrg(caller, (tx) => revokeApiKey(tx, orgId, keyId));
    if (!key) throw new ApiError('not_found', `API key ${keyId} not found`);
    return key;
  }

  /** For operators, who know a key's id but not its organization. */
  async revokeAnywhere(keyId: string, actor: Actor): Promise<ApiKeyListed> {
    const { rows } = await this.db.pool.query<{ org_id: number }>(
      'SELECT org_id FROM api_keys WHERE id = $1',
      [keyId],
    );
    const orgId = rows[0]?.org_id;
    if (orgId === undefined) throw new ApiError('not_found', `API key ${keyId} not found`);
    return this.revoke({ orgId, actor }, keyId);
  }

  list(orgId: number, page: { limit: number; offset: number }) {
    return this.db.withOrg(orgId, (tx) => listApiKeys(tx, orgId, page));
  }
}
