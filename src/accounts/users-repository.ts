import type { UserRole } from '../auth-types.js';
import type { Tx } from '../db/pool.js';

export type { UserRole };

export interface User {
  id: number;
  orgId: number;
  email: string;
  role: UserRole;
  passwordHash: string | null;
  createdAt: Date;
  passwordChangedAt: Date | null;
}

const COLUMNS = `id, org_id AS "orgId", email, role, password_hash AS "passwordHash",
  created_at AS "createdAt", password_changed_at AS "passwordChangedAt"`;

export interface NewUser {
  email: string;
  passwordHash: string;
  role: UserRole;
}

/** Inserts a user; an email already in use (any case) raises 23505 on users_email_key. */
export async function insertUser(tx: Tx, orgId: number, user: NewUser): Promise<User> {
  const { rows } = await tx.query<User>(
    `INSERT INTO users (org_id, email, password_hash, role) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [orgId, user.email, user.passwordHash, user.role],
  );
  return rows[0]!;
}

/**
 * The user signing in with this email, in whichever organization: a system-level lookup
 * (the organization is not known yet), the one place users are read across organizations.
 */
export async function findUserByEmail(tx: Tx, email: string): Promise<User | null> {
  const { rows } = await tx.query<User>(
    `SELECT ${COLUMNS} FROM users WHERE lower(email) = lower($1) AND removed_at IS NULL`,
    [email],
  );
  return rows[0] ?? null;
}

export async function findUser(tx: Tx, orgId: number, userId: number): Promise<User | null> {
  const { rows } = await tx.query<User>(`SELECT ${COLUMNS} FROM users WHERE org_id = $1 AND id = $2`, [
    orgId,
    userId,
  ]);
  return rows[0] ?? null;
}

/** The organization's first administrator (or first user), for operator commands. */
export async function firstUserOf(tx: Tx, orgId: number): Promise<User | null> {
  const { rows } = await tx.query<User>(
    `SELECT ${COLUMNS} FROM users WHERE org_id = $1 AND removed_at IS NULL ORDER BY role = 'admin' DESC, id LIMIT 1`,
    [orgId],
  );
  return rows[0] ?? null;
}

export async function anyUserExists(tx: Tx): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM users LIMIT 1');
  return (rowCount ?? 0) > 0;
}

/**
 * Sets a new password; any reset link still open for the person stops working, so a link
 * issued before they chose this password cannot replace it.
 */
export async function setPasswordHash(tx: Tx, orgId: number, userId: number, passwordHash: string) {
  await tx.query(
    'UPDATE users SET password_hash = $3, password_changed_at = now() WHERE org_id = $1 AND id = $2',
    [orgId, userId, passwordHash],
  );
  await revokeOpenResets(tx, orgId, userId);
}

/** Ends the person's reset links not yet used (a new link replaces them; so does a new password). */
export async function revokeOpenResets(tx: Tx, orgId: number, userId: number): Promise<void> {
  await tx.query(
    `UPDATE password_resets SET revoked_at = now()
      WHERE org_id = $1 AND user_id = $2 AND used_at IS NULL AND revoked_at IS NULL`,
    [orgId, userId],
  );
}
