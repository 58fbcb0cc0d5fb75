import { createHash, randomBytes } from 'node:crypto';
import { hashPassword } from '../accounts/passwords.js';
import { insertUser, type User } from '../accounts/users-repository.js';
import type { UserRole } from '../auth-types.js';
import type { Caller } from '../caller.js';
import type { Database } from '../db/pool.js';
import { ApiError, conflict, notFound } from '../errors.js';
import {
  findByTokenHash,
  findOpenInvitationByEmail,
  type Invitation,
  type InvitationByToken,
  insertInvitation,
  listOpenInvitations,
  markAccepted,
  replaceToken,
  revokeInvitation,
} from './invitations-repository.js';
import { emailInUse, lockMembers } from './repository.js';
import { emailTaken, isUniqueViolation } from './service.js';

export type { Invitation, InvitationByToken };

/** How long an invitation link works: a week, long enough for a person away for a few days. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** An invitation as minted or resent: the token exists only in this answer. */
export interface IssuedInvitation {
  invitation: Invitation;
  token: string;
}

const newToken = () => randomBytes(32).toString('base64url');
/** The token is 256 random bits, so a plain SHA-256 is all the stored form needs. */
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();

const INVALID_LINK =
  'This invitation link is not valid: it was used, revoked or replaced by a newer one. Ask an admin for a new link.';
const EXPIRED_LINK = 'This invitation link has expired. Ask an admin to resend it.';

/**
 * Invitations: an admin invites an address with a role, and the single-use link creates the
 * account in the organization. Tokens are stored hashed; resending replaces the token, so
 * the old link is dead at once.
 */
export class InvitationService {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  private expiry = () => new Date(this.now() + INVITATION_LIFETIME_MS);

  isExpired = (invitation: Invitation) => invitation.expiresAt.getTime() <= this.now();

  list(orgId: number, page: { limit: number; offset: number }) {
    return this.db.withOrg(orgId, (tx) => listOpenInvitations(tx, orgId, page));
  }

  async invite(caller: Caller, invitedBy: number, email: string, role: UserRole): Promise<IssuedInvitation> {
    const orgId = caller.orgId;
    const address = email.trim();
    // Addresses are unique across organizations (sign-in finds the account by address alone).
    if (await this.db.system((tx) => emailInUse(tx, address))) throw emailTaken();
    const token = newToken();
    try {
      const invitation = await this.db.withOrg(caller, async (tx) => {
        await lockMembers(tx, orgId);
        const open = await findOpenInvitationByEmail(tx, orgId, address);
        if (open && !this.isExpired(open))
          throw conflict(`${open.email} is already invited; resend or revoke that invitation`);
        // An expired one is superseded: the new invitation takes its place.
        if (open) await revokeInvitation(tx, orgId, open.id);
        return insertInvitation(tx, orgId, {
          email: address,
          role,
          tokenHash: hashToken(token),
          invitedBy,
          expiresAt: this.expiry(),
        });
      });
      return { invitation, token };
    } catch (err) {
      if (isUniqueViolation(err))
        throw conflict(`${address} is already invited; resend or revoke that invitation`);
      throw err;
    }
  }

  /** A new link and a new expiry; the previous link stops working. */
  async resend(caller: Caller, id: number): Promise<IssuedInvitation> {
    const orgId = caller.orgId;
    const token = newToken();
    const invitation = await this.db.withOrg(caller, (tx) =>
      replaceToken(tx, orgId, id, hashToken(token), this.expiry()),
    );
    if (!invitation) throw notFound('invitation');
    return { invitation, token };
  }

  async revoke(caller: Caller, id: number): Promise<void> {
    const orgId = caller.orgId;
    const revoked = await this.db.withOrg(caller, (tx) => revokeInvitation(tx, orgId, id));
    if (!revoked) throw notFound('invitation');
  }

  /** What the link invites to, for the page that accepts it; 404 when it no longer works. */
  async lookup(token: string): Promise<InvitationByToken> {
    const invitation = await this.db.system((tx) => findByTokenHash(tx, hashToken(token)));
    return this.usable(invitation);
  }

  private usable(invitation: InvitationByToken | null): InvitationByToken {
    if (!invitation) throw new ApiError('not_found', INVALID_LINK);
    if (this.isExpired(invitation)) throw new ApiError('not_found', EXPIRED_LINK);
    return invitation;
  }

  /**
   * Creates the account in the invitation's organization with the invited address and role,
   * and uses the invitation up; the row lock makes a second acceptance of the same link wait
   * and then find it used.
   */
  async accept(token: string, password: string): Promise<{ user: User; invitation: InvitationByToken }> {
    // Refuse a dead link before spending an argon2 hash on it.
    await this.lookup(token);
    const passwordHash = await hashPassword(password);
    try {
      return await this.db.system(async (tx) => {
        const invitation = this.usable(await findByTokenHash(tx, hashToken(token), true));
        const user = await insertUser(tx, invitation.orgId, {
          email: invitation.email,
          passwordHash,
          role: invitation.role,
        });
        await markAccepted(tx, invitation.orgId, invitation.id, user.id);
        return { user, invitation };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw emailTaken();
      throw err;
    }
  }
}
