import type { UserRole } from '../auth-types.js';
import type { Tx } from '../db/pool.js';

export interface Invitation {
  id: number;
  orgId: number;
  email: string;
  role: UserRole;
  invitedBy: string | null;
  createdAt: Date;
  sentAt: Date;
  expiresAt: Date;
}

const COLUMNS = `i.id, i.org_id AS "orgId", i.email, i.role, u.email AS "invitedBy",
  i.created_at AS "createdAt", i.sent_at AS "sentAt", i.expires_at AS "expiresAt"`;
const FROM = 'invitations i LEFT JOIN users u ON u.id = i.invited_by_user_id AND u.org_id = i.org_id';
/** Neither accepted nor revoked; it may still have expired. */
const OPEN = 'i.accepted_at IS NULL AND i.revoked_at IS NULL';

export async function insertInvitation(
  tx: Tx,
  orgId: number,
  value: { email: string; role: UserRole; tokenHash: Buffer; invitedBy: number; expiresAt: Date },
): Promise<Invitation> {
  const { rows } = await tx.query<{ id: number }>(
    `INSERT INTO invitations (org_id, email, role, token_hash, invited_by_user_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [orgId, value.email, value.role, value.tokenHash, value.invitedBy, value.expiresAt],
  );
  return (await findOpenInvitation(tx, orgId, rows[0]!.id))!;
}

export async function findOpenInvitation(tx: Tx, orgId: number, id: number): Promise<Invitation | null> {
  const { rows } = await tx.query<Invitation>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE i.org_id = $1 AND i.id = $2 AND ${OPEN}`,
    [orgId, id],
  );
  return rows[0] ?? null;
}

export async function findOpenInvitationByEmail(
  tx: Tx,
  orgId: number,
  email: string,
): Promise<Invitation | null> {
  const { rows } = await tx.query<Invitation>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE i.org_id = $1 AND lower(i.email) = lower($2) AND ${OPEN}`,
    [orgId, email],
  );
  return rows[0] ?? null;
}

export async function listOpenInvitations(
  tx: Tx,
  orgId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: Invitation[]; total: number }> {
  const [rows, count] = await Promise.all([
    tx.query<Invitation>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE i.org_id = $1 AND ${OPEN} ORDER BY i.created_at DESC, i.id DESC LIMIT $2 OFFSET $3`,
      [orgId, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM invitations i WHERE i.org_id = $1 AND ${OPEN}`, [
      orgId,
    ]),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/** A new token and expiry for an open invitation: the old link stops working at once. */
export async function replaceToken(
  tx: Tx,
  orgId: number,
  id: number,
  tokenHash: Buffer,
  expiresAt: Date,
): Promise<Invitation | null> {
  const { rowCount } = await tx.query(
    `UPDATE invitations i SET token_hash = $3, expires_at = $4, sent_at = now()
     WHERE i.org_id = $1 AND i.id = $2 AND ${OPEN}`,
    [orgId, id, tokenHash, expiresAt],
  );
  return rowCount ? findOpenInvitation(tx, orgId, id) : null;
}

export async function revokeInvitation(tx: Tx, orgId: number, id: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE invitations i SET revoked_at = now() WHERE i.org_id = $1 AND i.id = $2 AND ${OPEN}`,
    [orgId, id],
  );
  return (rowCount ?? 0) > 0;
}

/** What a token names, with its organization's name: read before anybody is signed in. */
export interface InvitationByToken extends Invitation {
  organizationName: string;
}

/**
 * The open invitation a token names, in whichever organization: a system-level lookup (the
 * organization is not known before the link is opened), by the token's hash. `forUpdate`
 * locks the row so that two acceptances of one link admit one.
 */
export async function findByTokenHash(
  tx: Tx,
  tokenHash: Buffer,
  forUpdate = false,
): Promise<InvitationByToken | null> {
  const { rows } = await tx.query<InvitationByToken>(
    `SELECT ${COLUMNS}, o.name AS "organizationName" FROM ${FROM} JOIN organizations o ON o.id = i.org_id
     WHERE i.token_hash = $1 AND ${OPEN}${forUpdate ? ' FOR UPDATE OF i' : ''}`,
    [tokenHash],
  );
  return rows[0] ?? null;
}

export async function markAccepted(tx: Tx, orgId: number, id: number, userId: number): Promise<void> {
  await tx.query(
    'UPDATE invitations SET accepted_at = now(), accepted_user_id = $3 WHERE org_id = $1 AND id = $2',
    [orgId, id, userId],
  );
}
