import type { Tx } from '../db/pool.js';
import { prepared } from '../db/prepared.js';

export interface ApiKeyRecord {
  id: string;
  orgId: number;
  name: string;
  scopes: string[];
  environment: 'production' | 'preview';
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/**
 * A key as authentication reads it: with its organization's name, so that the principal
 * answers GET /orgs/me without a query of its own. The name is held in the key cache
 * under the same LISTEN barrier as revocation: migration 0053 announces a rename on the
 * key channel.
 */
export interface AuthKeyRecord extends ApiKeyRecord {
  orgName: string;
}

/** A key as the keys page lists it: with who minted it, removed from the organization or not. */
export interface ApiKeyListed extends ApiKeyRecord {
  createdBy: { id: number; email: string; removed: boolean } | null;
}

/** The record's columns of table or alias `t`. */
const columnsOf = (t: string) => `${t}.id, ${t}.org_id AS "orgId", ${t}.name, ${t}.scopes, ${t}.environment,
  ${t}.created_at AS "createdAt", ${t}.expires_at AS "expiresAt", ${t}.revoked_at AS "revokedAt",
  ${t}.last_used_at AS "lastUsedAt"`;
const COLUMNS = columnsOf('api_keys');

/**
 * The minter, read where the key is shown (not where it authenticates). The key belongs to
 * the organization: a minter's removal keeps the user row, so the key still names them.
 */
const LISTED_COLUMNS = `${COLUMNS}, (SELECT json_build_object('id', u.id, 'email', u.email, 'removed', u.removed_at IS NOT NULL)
  FROM users u WHERE u.id = api_keys.created_by_user_id AND u.org_id = api_keys.org_id) AS "createdBy"`;

export interface NewApiKey {
  id: string;
  name: string;
  scopes: string[];
  environment: 'production' | 'preview';
  expiresAt: Date | null;
  createdByUserId?: number | null;
}

export async function insertApiKey(tx: Tx, orgId: number, key: NewApiKey): Promise<ApiKeyListed> {
  const { rows } = await tx.query<ApiKeyListed>(
    `INSERT INTO api_keys (id, org_id, name, scopes, environment, expires_at, created_by_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${LISTED_COLUMNS}`,
    [key.id, orgId, key.name, key.scopes, key.environment, key.expiresAt, key.createdByUserId ?? null],
  );
  return rows[0]!;
}

// Row-level security applies to the organization as to the key: both are the org's own.
const FIND_TEXT = `SELECT ${columnsOf('k')}, o.name AS "orgName"
  FROM api_keys k JOIN organizations o ON o.id = k.org_id
  WHERE k.org_id = $1 AND k.id = $2`;

export async function findApiKey(tx: Tx, orgId: number, id: string): Promise<AuthKeyRecord | null> {
  const { rows } = await tx.query<AuthKeyRecord>(FIND_TEXT, [orgId, id]);
  return rows[0] ?? null;
}

/** `findApiKey` as a named statement (org_id $1, id $2), to ride behind a transaction's prologue. */
export const FIND_API_KEY = prepared(FIND_TEXT);

export async function listApiKeys(
  tx: Tx,
  orgId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: ApiKeyListed[]; total: number }> {
  const [list, count] = await Promise.all([
    tx.query<ApiKeyListed>(
      `SELECT ${LISTED_COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
      [orgId, page.limit, page.offset],
    ),
    tx.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1', [orgId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.n };
}

/** Sets `revoked_at` once; returns the key, or null when it is not this organization's. */
export async function revokeApiKey(tx: Tx, orgId: number, id: string): Promise<ApiKeyListed | null> {
  const { rows } = await tx.query<ApiKeyListed>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
     WHERE org_id = $1 AND id = $2 RETURNING ${LISTED_COLUMNS}`,
    [orgId, id],
  );
  return rows[0] ?? null;
}

export async function touchApiKey(tx: Tx, orgId: number, id: string): Promise<void> {
  await tx.query(
    `UPDATE api_keys SET last_used_at = now()
     WHERE org_id = $1 AND id = $2 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [orgId, id],
  );
}
