import { randomBytes } from 'node:crypto';
import type { Caller } from '../caller.js';
import type { Database } from '../db/pool.js';
import { ApiError, conflict, fieldError } from '../errors.js';
import { hashPassword, randomPassword, verifyPassword } from './passwords.js';
import { findOrganization, insertOrganization, type Organization } from './repository.js';
import {
  anyUserExists,
  findUser,
  findUserByEmail,
  firstUserOf,
  insertUser,
  setPasswordHash,
  type User,
} from './users-repository.js';

/** Who may sign up (`TAGTRAIL_SIGNUP`). */
export type SignupMode = 'first-user-only' | 'open' | 'closed';

export interface SignUpInput {
  email: string;
  password: string;
  organizationName: string;
}

/** Serialises sign-ups, so "first user only" admits exactly one under concurrency. */
const SIGNUP_LOCK = 0x74616774; // 'tagt'

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export const INVALID_CREDENTIALS = 'Invalid email or password';

/** People: sign-up (a new organization and its administrator), sign-in, passwords. */
export class AccountService {
  constructor(
    private readonly db: Database,
    readonly signupMode: SignupMode,
  ) {}

  /** Creates the organization and its first user, an administrator. */
  async signUp(input: SignUpInput): Promise<{ user: User; organization: Organization }> {
    if (this.signupMode === 'closed') throw new ApiError('forbidden', 'Sign-up is closed on this deployment');
    if (this.signupMode === 'first-user-only' && (await this.db.system(anyUserExists)))
      throw firstUserTaken();
    const email = input.email.trim();
    const name = input.organizationName.trim();
    if (name.length === 0) {
      throw fieldError('organization_name', 'too_short', 'organization_name must not be blank', {
        min_length: 1,
      });
    }
    const passwordHash = await hashPassword(input.password);
    try {
      return await this.db.system(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [SIGNUP_LOCK]);
        if (this.signupMode === 'first-user-only' && (await anyUserExists(tx))) throw firstUserTaken();
        const organization = await insertOrganization(tx, name);
        const user = await insertUser(tx, organization.id, { email, passwordHash, role: 'admin' });
        return { user, organization };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('An account with this email already exists');
      throw err;
    }
  }

  /**
   * What a signed-out visitor should be offered: a fresh install (no user yet) opens on
   * sign-up for its first administrator, since nobody can sign in.
   */
  async signUpState(): Promise<{ hasUsers: boolean; signUpOpen: boolean }> {
    const hasUsers = await this.db.system(anyUserExists);
    const signUpOpen = this.signupMode === 'open' || (this.signupMode === 'first-user-only' && !hasUsers);
    return { hasUsers, signUpOpen };
  }

  /** The user these credentials belong to; 401 with one message whatever was wrong. */
  async signIn(email: string, password: string): Promise<User> {
    const user = await this.db.system((tx) => findUserByEmail(tx, email.trim()));
    const ok = await verifyPassword(user?.passwordHash ?? null, password);
    if (!user || !ok) throw new ApiError('unauthorized', INVALID_CREDENTIALS);
    return user;
  }

  /** Checks the current password and stores the new one. */
  async changePassword(caller: Caller, userId: number, current: string, next: string): Promise<void> {
    const { orgId } = caller;
    const user = await this.db.withOrg(orgId, (tx) => findUser(tx, orgId, userId));
    if (!user) throw new ApiError('unauthorized', 'Not signed in');
    if (!(await verifyPassword(user.passwordHash, current))) {
      throw fieldError('current_password', 'invalid_value', 'current password is incorrect');
    }
    const passwordHash = await hashPassword(next);
    await this.db.withOrg(caller, (tx) => setPasswordHash(tx, orgId, userId, passwordHash));
  }

  /**
   * Checks the current password and changes the address the person signs in with. An
   * address any account already uses (any case) is 409.
   */
  async changeEmail(caller: Caller, userId: number, current: string, email: string): Promise<User> {
    const { orgId } = caller;
    const user = await this.db.withOrg(orgId, (tx) => findUser(tx, orgId, userId));
    if (!user) throw new ApiError('unauthorized', 'Not signed in');
    if (!(await verifyPassword(user.passwordHash, current))) {
      throw fieldError('current_password', 'invalid_value', 'current password is incorrect');
    }
    const address = email.trim();
    try {
      return await this.db.withOrg(caller, async (tx) => {
        const { rows } = await tx.query<User>(
          `UPDATE users SET email = $3 WHERE org_id = $1 AND id = $2
           RETURNING id, org_id AS "orgId", email, role, password_hash AS "passwordHash",
             created_at AS "createdAt", password_changed_at AS "passwordChangedAt"`,
          [orgId, userId, address],
        );
        return rows[0]!;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('An account with this email already exists');
      throw err;
    }
  }

  /**
   * A user of the organization for operator commands: its first administrator, or a new
   * administrator `admin@org-ID.local` with a random password nobody is told. Where open
   * sign-up let somebody take that address first (it is guessable), the new administrator
   * gets `admin-<random>@org-ID.local` instead of failing on the unique address.
   */
  async operatorUser(orgId: number): Promise<User> {
    const existing = await this.db.system(async (tx) => {
      if (!(await findOrganization(tx, orgId)))
        throw new ApiError('not_found', `organization ${orgId} not found`);
      return firstUserOf(tx, orgId);
    });
    if (existing) return existing;
    const passwordHash = await hashPassword(randomPassword());
    return this.db.withOrg(orgId, async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [SIGNUP_LOCK, orgId]);
      const first = await firstUserOf(tx, orgId);
      if (first) return first;
      const create = (email: string) => insertUser(tx, orgId, { email, passwordHash, role: 'admin' });
      await tx.query('SAVEPOINT operator_address');
      try {
        return await create(`admin@org-${orgId}.local`);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        await tx.query('ROLLBACK TO SAVEPOINT operator_address');
        return create(`admin-${randomBytes(6).toString('hex')}@org-${orgId}.local`);
      }
    });
  }
}

const firstUserTaken = () =>
  new ApiError(
    'forbidden',
    'Sign-up is closed: this deployment already has its first user. Ask an administrator for an account.',
  );
