import type { Tx } from '../db/pool.js';
import type { UserRole } from './users-repository.js';

/** A web session row joined with what every /internal/ request needs to know. */
export interface SessionRecord {
  id: string;
  orgId: number;
  userId: number;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  email: string;
  role: UserRole;
  organizationName: string;
  /** The organization requires two-factor sign-in and this person has not set it up. */
  totpEnrolmentRequired: boolean;
}

export async function insertSession(
  tx: Tx,
  orgId: number,
  session: { id: string; userId: number; expiresAt: Date },
): Promise<void> {
  await tx.query('INSERT INTO web_sessions (id, org_id, user_id, expires_at) VALUES ($1, $2, $3, $4)', [
    session.id,
    orgId,
    session.userId,
    session.expiresAt,
  ]);
}

export async function findSession(tx: Tx, orgId: number, id: string): Promise<SessionRecord | null> {
  const { rows } = await tx.query<SessionRecord>(
    `SELECT s.id, s.org_id AS "orgId", s.user_id AS "userId", s.created_at AS "createdAt",
       s.expires_at AS "expiresAt", s.revoked_at AS "revokedAt", u.email, u.role, o.name AS "organizationName",
       o.require_totp AND NOT EXISTS (SELECT 1 FROM user_totp t
         WHERE t.org_id = s.org_id AND t.user_id = s.user_id AND t.enabled_at IS NOT NULL) AS "totpEnrolmentRequired"
     FROM web_sessions s
     JOIN users u ON u.id = s.user_id AND u.org_id = s.org_id AND u.removed_at IS NULL
     JOIN organizations o ON o.id = s.org_id
     WHERE s.org_id = $1 AND s.id = $2`,
    [orgId, id],
  );
  return rows[0] ?? null;
}

export async function revokeSession(tx: Tx, orgId: number, id: string): Promise<void> {
  await tx.query(
    'UPDATE web_sessions SET revoked_at = now() WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL',
    [orgId, id],
  );
}

/** Revokes every live session of the user except `keepId`; returns how many. */
export async function revokeOtherSessions(
  tx: Tx,
  orgId: number,
  userId: number,
  keepId: string | null,
): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE web_sessions SET revoked_at = now()
     WHERE org_id = $1 AND user_id = $2 AND id IS DISTINCT FROM $3 AND revoked_at IS NULL AND expires_at > now()`,
    [orgId, userId, keepId],
  );
  return rowCount ?? 0;
}

/** Drops the user's sessions that ended long ago, so the table grows with users, not sign-ins. */
export async function pruneSessions(tx: Tx, orgId: number, userId: number): Promise<void> {
  await tx.query(
    `DELETE FROM web_sessions WHERE org_id = $1 AND user_id = $2 AND expires_at < now() - interval '30 days'`,
    [orgId, userId],
  );
}

/**
 * Deletes every session that has ended (expired or revoked), in every organization: the
 * scheduled sweep (SessionSweeper). The one function here without an organization id, since
 * it is upkeep across organizations run outside any request; it reads nothing back.
 */
export async function deleteEndedSessions(tx: Tx, now: Date): Promise<number> {
  const { rowCount } = await tx.query(
    'DELETE FROM web_sessions WHERE expires_at <= $1 OR revoked_at IS NOT NULL',
    [now],
  );
  return rowCount ?? 0;
}
