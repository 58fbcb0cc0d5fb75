import type { UserRole } from '../auth-types.js';
import type { Caller } from '../caller.js';
import type { Database } from '../db/pool.js';
import { ApiError, conflict, notFound } from '../errors.js';
import {
  countAdmins,
  findMember,
  listMembers,
  lockMembers,
  type Member,
  removeMember,
  setMemberRole,
} from './repository.js';

export type { Member };

const lastAdmin = (what: string) =>
  conflict(`${what}: an organization keeps at least one admin. Make another member an admin first.`);

/**
 * The people of an organization: list, change a role, remove. Every change that could take
 * away an admin runs under the organization's members lock and counts the admins left, so
 * two admins demoting each other at once cannot leave the organization without one.
 */
export class MemberService {
  constructor(private readonly db: Database) {}

  list(orgId: number, page: { limit: number; offset: number }) {
    return this.db.withOrg(orgId, (tx) => listMembers(tx, orgId, page));
  }

  setRole(caller: Caller, userId: number, role: UserRole): Promise<Member> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      await lockMembers(tx, orgId);
      const member = await findMember(tx, orgId, userId);
      if (!member) throw notFound('member');
      if (member.role === 'admin' && role !== 'admin' && (await countAdmins(tx, orgId)) <= 1)
        throw lastAdmin('The last admin cannot be given another role');
      return setMemberRole(tx, orgId, userId, role);
    });
  }

  /** Removes the member and ends their sessions at once; what they minted or did stays. */
  remove(caller: Caller, userId: number): Promise<void> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      await lockMembers(tx, orgId);
      const member = await findMember(tx, orgId, userId);
      if (!member) throw notFound('member');
      if (member.role === 'admin' && (await countAdmins(tx, orgId)) <= 1)
        throw lastAdmin('The last admin cannot be removed');
      await removeMember(tx, orgId, userId);
    });
  }
}

export const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/** The error a taken address gets wherever an account is about to be made for it. */
export const emailTaken = () => new ApiError('conflict', 'An account with this email already exists');
