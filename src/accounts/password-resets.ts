import { createHash, randomBytes } from 'node:crypto';
import type { Caller } from '../caller.js';
import type { Database, Tx } from '../db/pool.js';
import { ApiError, conflict, notFound } from '../errors.js';
import { hashPassword } from './passwords.js';
import { findUser, revokeOpenResets, setPasswordHash } from './users-repository.js';

/** How long a reset link works: a day, enough to pass it on, short enough to go stale. */
export const RESET_LIFETIME_MS = 24 * 3600_000;

const newToken = () => randomBytes(32).toString('base64url');
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export interface IssuedReset {
  token: string;
  expiresAt: Date;
  email: string;
}

interface ResetRow {
  id: number;
  org_id: number;
  user_id: number;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
  email: string;
  removed_at: Date | null;
}

const deadLink = (why: string) => new ApiError('not_found', `This password reset link ${why}`);

/** Admin-issued, single-use password reset links (docs/web-app.md "Accounts"). */
export class PasswordResetService {
  constructor(
    private readonly db: Database,
    private readonly lifetimeMs = RESET_LIFETIME_MS,
  ) {}

  /** A new link for a member of the caller's organization; their previous unused link dies. */
  async issue(caller: Caller, userId: number): Promise<IssuedReset> {
    const { orgId } = caller;
    // A link for oneself would change the password without the current one: what a stolen
    // session could turn into a lasting sign-in.
    if (caller.actor.type === 'user' && caller.actor.id === userId) {
      throw conflict('Your own password is changed on your account page, with the current one');
    }
    const token = newToken();
    const expiresAt = new Date(Date.now() + this.lifetimeMs);
    const email = await this.db.withOrg(caller, async (tx) => {
      const user = await findUser(tx, orgId, userId);
      if (!user || (await isRemoved(tx, orgId, userId))) throw notFound('member');
      await revokeOpenResets(tx, orgId, userId);
      await tx.query(
        `INSERT INTO password_resets (org_id, user_id, token_hash, issued_by_user_id, expires_at)
         VALUES ($1, $2, $3, $4, $5)`,
        [orgId, userId, hashToken(token), caller.actor.type === 'user' ? caller.actor.id : null, expiresAt],
      );
      return user.email;
    });
    return { token, expiresAt, email };
  }

  /**
   * Sets the new password through a link: once, before it expires. Ends every session of
   * the user (whoever held the old password is signed out). Returns the user's address.
   */
  async reset(token: string, newPassword: string): Promise<{ email: string }> {
    const passwordHash = await hashPassword(newPassword);
    return this.db.system(async (tx) => {
      const { rows } = await tx.query<ResetRow>(
        `SELECT r.id, r.org_id, r.user_id, r.expires_at, r.used_at, r.revoked_at, u.email, u.removed_at
           FROM password_resets r JOIN users u ON u.id = r.user_id
          WHERE r.token_hash = $1 FOR UPDATE OF r`,
        [hashToken(token)],
      );
      const row = rows[0];
      if (!row || row.revoked_at || row.removed_at)
        throw deadLink('is not valid; ask an admin for a new one');
      if (row.used_at) throw deadLink('was already used; ask an admin for a new one');
      if (row.expires_at.getTime() <= Date.now()) throw deadLink('has expired; ask an admin for a new one');
      // The change is the person's own: the activity log names them.
      await tx.query("SELECT set_config('tagtrail.actor', $1, true)", [
        JSON.stringify({ type: 'user', id: String(row.user_id), name: row.email }),
      ]);
      await tx.query('UPDATE password_resets SET used_at = now() WHERE id = $1', [row.id]);
      await setPasswordHash(tx, row.org_id, row.user_id, passwordHash);
      await tx.query(
        'UPDATE web_sessions SET revoked_at = now() WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL',
        [row.org_id, row.user_id],
      );
      return { email: row.email };
    });
  }
}

async function isRemoved(tx: Tx, orgId: number, userId: number): Promise<boolean> {
  const { rows } = await tx.query<{ removed: boolean }>(
    'SELECT removed_at IS NOT NULL AS removed FROM users WHERE org_id = $1 AND id = $2',
    [orgId, userId],
  );
  return rows[0]?.removed ?? true;
}
