import type pg from 'pg';
import { signingKeyContext, totpSecretContext, webhookSecretContext } from './contexts.js';
import { type SecretBox, SecretUnavailable } from './secret-box.js';

/** A stored secret as the start's pass reads it. */
interface StoredSecret {
  /** The text kept in the column (a sealed value, or the secret as given). */
  value: string;
  context: string;
  /** Writes `next` if the column still holds `value` (another instance may be starting too). */
  replace(client: pg.ClientBase, next: string): Promise<pg.QueryResult>;
}

/** Every stored secret of the three columns that keep one. */
async function storedSecrets(client: pg.ClientBase): Promise<StoredSecret[]> {
  const webhooks = await client.query<{ id: string; org_id: string; secret: string }>(
    'SELECT id, org_id, secret FROM webhook_endpoints',
  );
  const totp = await client.query<{ org_id: string; user_id: string; secret: string }>(
    'SELECT org_id, user_id, secret FROM user_totp',
  );
  // The private key is a JWK object as given, a JSON string once sealed.
  const keys = await client.query<{ id: string; sealed: boolean; value: string }>(
    `SELECT id, jsonb_typeof(private_jwk) = 'string' AS sealed,
       CASE WHEN jsonb_typeof(private_jwk) = 'string' THEN private_jwk #>> '{}' ELSE private_jwk::text END AS value
     FROM signing_keys`,
  );
  return [
    ...webhooks.rows.map((r) => ({
      value: r.secret,
      context: webhookSecretContext(Number(r.org_id)),
      replace: (c: pg.ClientBase, next: string) =>
        c.query('UPDATE webhook_endpoints SET secret = $1 WHERE id = $2 AND secret = $3', [
          next,
          r.id,
          r.secret,
        ]),
    })),
    ...totp.rows.map((r) => ({
      value: r.secret,
      context: totpSecretContext(Number(r.org_id), Number(r.user_id)),
      replace: (c: pg.ClientBase, next: string) =>
        c.query('UPDATE user_totp SET secret = $1 WHERE org_id = $2 AND user_id = $3 AND secret = $4', [
          next,
          r.org_id,
          r.user_id,
          r.secret,
        ]),
    })),
    ...keys.rows.map((r) => ({
      value: r.value,
      context: signingKeyContext(r.id),
      replace: (c: pg.ClientBase, next: string) =>
        c.query(
          'UPDATE signing_keys SET private_jwk = to_jsonb($1::text) WHERE id = $2 AND private_jwk = $3::jsonb',
          [next, r.id, r.sealed ? JSON.stringify(r.value) : r.value],
        ),
    })),
  ];
}

/** The advisory lock the start's pass holds: one instance's pass at a time. */
const LOCK_KEY = 'tagtrail:secrets-at-rest';

/** Stored secrets this instance cannot open: it must not start (docs/operations.md, "Secrets at rest"). */
export class SecretKeysMissing extends Error {}

/**
 * The start's pass over the stored secrets (docs/operations.md, "Secrets at rest"). First
 * every sealed one is opened: if any names a key this instance lacks, or does not open,
 * nothing is changed and SecretKeysMissing says which keys are missing, so an instance
 * given the wrong keys stops before it signs or checks anything with them. Then what is
 * stored as given (from before sealing began, or by an instance without a key) and what
 * an older key sealed are sealed under the sealing key, which is how a key is rotated.
 * Returns how many were sealed anew.
 */
export async function resealSecrets(pool: pg.Pool, box: SecretBox): Promise<number> {
  const client = await pool.connect();
  try {
    // One start at a time: two instances given different keys at once must not each seal
    // part of the secrets; the second reads what the first sealed and refuses.
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [LOCK_KEY]);
    const resealed = await resealLocked(client, box);
    await client.query('COMMIT');
    return resealed;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function resealLocked(client: pg.ClientBase, box: SecretBox): Promise<number> {
  const stored = await storedSecrets(client);
  const missing = new Set<string>();
  let damaged = 0;
  const plain = stored.map((s) => {
    try {
      return box.open(s.value, s.context);
    } catch (err) {
      if (!(err instanceof SecretUnavailable)) throw err;
      if (err.keyId !== null && !box.keyIds.includes(err.keyId)) missing.add(err.keyId);
      else damaged++;
      return undefined;
    }
  });
  if (missing.size > 0 || damaged > 0) {
    const lacks =
      missing.size > 0 ? `sealed under key(s) ${[...missing].join(', ')}, which this instance lacks` : '';
    const broken = damaged > 0 ? `${damaged} that do not open under their key (damaged or moved)` : '';
    const has = box.keyIds.length > 0 ? `its keys are ${box.keyIds.join(', ')}` : 'it has no key';
    throw new SecretKeysMissing(
      `stored secrets ${[lacks, broken].filter(Boolean).join(', and ')} (${has}): give every instance the same TAGTRAIL_SECRET_KEYS (docs/operations.md, "Secrets at rest")`,
    );
  }
  let resealed = 0;
  for (const [i, s] of stored.entries()) {
    if (!box.needsResealing(s.value)) continue;
    const { rowCount } = await s.replace(client, box.seal(plain[i]!, s.context));
    resealed += rowCount ?? 0;
  }
  return resealed;
}
