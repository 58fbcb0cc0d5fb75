import type { UserRole } from '../auth-types.js';
import type { Tx } from '../db/pool.js';

/** A person of the organization, as the members page lists them. */
export interface Member {
  id: number;
  email: string;
  role: UserRole;
  createdAt: Date;
  /** Signs in with a second factor (an enabled TOTP; a pending enrolment is not). */
  twoFactor: boolean;
}

const MEMBER_COLUMNS = `id, email, role, created_at AS "createdAt",
  EXISTS (SELECT 1 FROM user_totp t WHERE t.org_id = users.org_id AND t.user_id = users.id
    AND t.enabled_at IS NOT NULL) AS "twoFactor"`;

/** Serialises the changes that could leave an organization without an administrator. */
const MEMBERS_LOCK = 0x6d656d62; // 'memb'

export async function lockMembers(tx: Tx, orgId: number): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [MEMBERS_LOCK, orgId]);
}

export async function listMembers(
  tx: Tx,
  orgId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: Member[]; total: number }> {
  const [rows, count] = await Promise.all([
    tx.query<Member>(
      `SELECT ${MEMBER_COLUMNS} FROM users WHERE org_id = $1 AND removed_at IS NULL
       ORDER BY lower(email), id LIMIT $2 OFFSET $3`,
      [orgId, page.limit, page.offset],
    ),
    tx.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE org_id = $1 AND removed_at IS NULL', [
      orgId,
    ]),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

export async function findMember(tx: Tx, orgId: number, userId: number): Promise<Member | null> {
  const { rows } = await tx.query<Member>(
    `SELECT ${MEMBER_COLUMNS} FROM users WHERE org_id = $1 AND id = $2 AND removed_at IS NULL`,
    [orgId, userId],
  );
  return rows[0] ?? null;
}

export async function countAdmins(tx: Tx, orgId: number): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM users WHERE org_id = $1 AND role = 'admin' AND removed_at IS NULL`,
    [orgId],
  );
  return rows[0]!.n;
}

export async function setMemberRole(tx: Tx, orgId: number, userId: number, role: UserRole): Promise<Member> {
  const { rows } = await tx.query<Member>(
    `UPDATE users SET role = $3 WHERE org_id = $1 AND id = $2 AND removed_at IS NULL RETURNING ${MEMBER_COLUMNS}`,
    [orgId, userId, role],
  );
  if (role !== 'admin') await revokeLinksIssuedBy(tx, orgId, userId);
  return rows[0]!;
}

/**
 * The open invitations and unused password reset links a member issued stop working when
 * they are no longer an admin (removed or given another role): a link is an admin's act,
 * and one kept from before could make its issuer an admin again, or sign them in as
 * whoever the reset was for. Other admins see the invitations go from the open list.
 */
async function revokeLinksIssuedBy(tx: Tx, orgId: number, userId: number): Promise<void> {
  await tx.query(
    `UPDATE invitations SET revoked_at = now()
      WHERE org_id = $1 AND invited_by_user_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [orgId, userId],
  );
  await tx.query(
    `UPDATE password_resets SET revoked_at = now()
      WHERE org_id = $1 AND issued_by_user_id = $2 AND used_at IS NULL AND revoked_at IS NULL`,
    [orgId, userId],
  );
}

/**
 * Marks the member removed and ends every session of theirs in the same transaction. The
 * row stays, so the keys they minted keep naming them; the password hash goes, so the row
 * can never sign in again.
 */
export async function removeMember(tx: Tx, orgId: number, userId: number): Promise<void> {
  await tx.query(
    'UPDATE users SET removed_at = now(), password_hash = NULL WHERE org_id = $1 AND id = $2 AND removed_at IS NULL',
    [orgId, userId],
  );
  await tx.query(
    'UPDATE web_sessions SET revoked_at = now() WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL',
    [orgId, userId],
  );
  await revokeLinksIssuedBy(tx, orgId, userId);
}

/** Whether an account (of any organization) already uses this address. */
export async function emailInUse(tx: Tx, email: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    'SELECT 1 FROM users WHERE lower(email) = lower($1) AND removed_at IS NULL',
    [email],
  );
  return (rowCount ?? 0) > 0;
}
