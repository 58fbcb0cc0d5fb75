import type { Tx } from '../db/pool.js';

/**
 * A person's TOTP secret as stored (sealed: TotpService opens it); `enabledAt` null while
 * enrolment awaits its first code.
 */
export interface TotpRecord {
  secret: string;
  enabledAt: Date | null;
  lastStep: number | null;
  recoveryCodesLeft: number;
}

export async function findTotp(tx: Tx, orgId: number, userId: number): Promise<TotpRecord | null> {
  const { rows } = await tx.query<{
    secret: string;
    enabledAt: Date | null;
    lastStep: string | null;
    recoveryCodesLeft: number;
  }>(
    `SELECT secret, enabled_at AS "enabledAt", last_step AS "lastStep",
       cardinality(recovery_code_hashes) AS "recoveryCodesLeft"
     FROM user_totp WHERE org_id = $1 AND user_id = $2`,
    [orgId, userId],
  );
  const row = rows[0];
  return row ? { ...row, lastStep: row.lastStep === null ? null : Number(row.lastStep) } : null;
}

/** Starts (or restarts) enrolment with a new secret; refuses to replace an enabled one. */
export async function upsertPendingTotp(tx: Tx, orgId: number, userId: number, secret: string) {
  const { rowCount } = await tx.query(
    `INSERT INTO user_totp (org_id, user_id, secret) VALUES ($1, $2, $3)
     ON CONFLICT (org_id, user_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = now(), last_step = NULL
       WHERE user_totp.enabled_at IS NULL`,
    [orgId, userId, secret],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Records that the code of time step `step` was accepted: false when that step or a later
 * one was already used, so a code works once. Only last_step changes, a column the activity
 * trigger does not watch: a sign-in is no activity.
 */
export async function acceptStep(tx: Tx, orgId: number, userId: number, step: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE user_totp SET last_step = $3
     WHERE org_id = $1 AND user_id = $2 AND (last_step IS NULL OR last_step < $3)`,
    [orgId, userId, step],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Accepts the confirming code's step and turns TOTP on with its first recovery codes, in
 * one statement, so the activity log gets one `created` entry that already counts them.
 */
export async function enableTotp(
  tx: Tx,
  orgId: number,
  userId: number,
  step: number,
  recoveryHashes: string[],
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE user_totp SET last_step = $3, enabled_at = now(),
       recovery_code_hashes = $4, recovery_codes_generated_at = now(), recovery_code_used_at = NULL
     WHERE org_id = $1 AND user_id = $2 AND enabled_at IS NULL AND (last_step IS NULL OR last_step < $3)`,
    [orgId, userId, step, recoveryHashes],
  );
  return (rowCount ?? 0) > 0;
}

/** Replaces every recovery code of an enabled TOTP (the old ones stop working). */
export async function replaceRecoveryCodes(
  tx: Tx,
  orgId: number,
  userId: number,
  recoveryHashes: string[],
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE user_totp SET recovery_code_hashes = $3, recovery_codes_generated_at = now()
     WHERE org_id = $1 AND user_id = $2 AND enabled_at IS NOT NULL`,
    [orgId, userId, recoveryHashes],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Spends the recovery code with this hash: true once, false when it is not (or no longer)
 * one of the person's. The WHERE names the hash, so of two sign-ins racing with the same
 * code the second finds it gone once the first commits.
 */
export async function spendRecoveryCode(
  tx: Tx,
  orgId: number,
  userId: number,
  hash: string,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE user_totp SET recovery_code_hashes = array_remove(recovery_code_hashes, $3), recovery_code_used_at = now()
     WHERE org_id = $1 AND user_id = $2 AND enabled_at IS NOT NULL AND $3 = ANY (recovery_code_hashes)`,
    [orgId, userId, hash],
  );
  return (rowCount ?? 0) > 0;
}

/** Deletes the person's TOTP, pending or on; true when one was on. */
export async function deleteTotp(tx: Tx, orgId: number, userId: number): Promise<boolean> {
  const { rows } = await tx.query<{ on: boolean }>(
    'DELETE FROM user_totp WHERE org_id = $1 AND user_id = $2 RETURNING enabled_at IS NOT NULL AS on',
    [orgId, userId],
  );
  return rows[0]?.on ?? false;
}

export async function organizationRequiresTotp(tx: Tx, orgId: number): Promise<boolean> {
  const { rows } = await tx.query<{ required: boolean }>(
    'SELECT require_totp AS required FROM organizations WHERE id = $1',
    [orgId],
  );
  return rows[0]?.required ?? false;
}

export async function setOrganizationRequiresTotp(tx: Tx, orgId: number, required: boolean): Promise<void> {
  await tx.query('UPDATE organizations SET require_totp = $2 WHERE id = $1', [orgId, required]);
}

/** The live member of the organization with this address (any case), for the operator's reset. */
export async function findMemberIdByEmail(tx: Tx, orgId: number, email: string): Promise<number | null> {
  const { rows } = await tx.query<{ id: number }>(
    'SELECT id FROM users WHERE org_id = $1 AND lower(email) = lower($2) AND removed_at IS NULL',
    [orgId, email],
  );
  return rows[0]?.id ?? null;
}
