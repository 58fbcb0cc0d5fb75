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
  /** last_used_at is more than a minute old: a use now should record itself (touchSession). */
  touchDue: boolean;
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
         WHERE t.org_id = s.org_id AND t.user_id = s.user_id AND t.enabled_at IS NOT NULL) AS "totpEnrolmentRequired",
       s.last_used_at < now() - interval '1 minute' AS "touchDue"
     FROM web_sessions s
     JOIN users u ON u.id = s.user_id AND u.org_id = s.org_id AND u.removed_at IS NULL
     JOIN organizations o ON o.id = s.org_id
     WHERE s.org_id = $1 AND s.id = $2`,
    [orgId, id],
  );
  return rows[0] ?? null;
}

/** Records a use of a live session (at most once a minute: SessionRecord.touchDue). */
export async function touchSession(tx: Tx, orgId: number, id: string): Promise<void> {
  await tx.query(
    'UPDATE web_sessions SET last_used_at = now() WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL',
    [orgId, id],
  );
}

/**
 * Serialises the creation of one user's sessions until the transaction commits (a lock on
 * the user's row), so that concurrent sign-ins each count the others' sessions when ending
 * those past the cap. NO KEY UPDATE: the sessions' foreign key checks (KEY SHARE) do not
 * wait for it.
 */
export async function lockUserSessions(tx: Tx, orgId: number, userId: number): Promise<void> {
  await tx.query('SELECT 1 FROM users WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE', [orgId, userId]);
}

/**
 * Ends (revokes) the user's live sessions but `keepId` and the `keepOthers` most recently
 * used of the others; returns how many. Call under lockUserSessions.
 */
export async function endSessionsPastCap(
  tx: Tx,
  orgId: number,
  userId: number,
  keepId: string,
  keepOthers: number,
): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE web_sessions SET revoked_at = now()
     WHERE org_id = $1 AND id IN (
       SELECT id FROM web_sessions
       WHERE org_id = $1 AND user_id = $2 AND id <> $3 AND revoked_at IS NULL AND expires_at > now()
       ORDER BY last_used_at DESC, created_at DESC, id
       OFFSET $4)`,
    [orgId, userId, keepId, keepOthers],
  );
  return rowCount ?? 0;
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
