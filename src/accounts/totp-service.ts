import { generateSecret, generateURI, verify } from 'otplib';
import type { Caller } from '../caller.js';
import type { Database } from '../db/pool.js';
import { ApiError, conflict, fieldError, notFound } from '../errors.js';
import { findMember } from '../members/repository.js';
import { totpSecretContext } from '../secrets/contexts.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { verifyPassword } from './passwords.js';
import { revokeOtherSessions } from './sessions-repository.js';
import { hashRecoveryCode, newRecoveryCodes, normalizeRecoveryCode } from './totp-recovery.js';
import {
  acceptStep,
  deleteTotp,
  enableTotp,
  findMemberIdByEmail,
  findTotp,
  organizationRequiresTotp,
  replaceRecoveryCodes,
  setOrganizationRequiresTotp,
  spendRecoveryCode,
  upsertPendingTotp,
} from './totp-repository.js';
import { findUser } from './users-repository.js';

/** RFC 6238 defaults every authenticator app understands: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;
/** One step either side, for clocks a little apart and codes typed as they roll over. */
const TOLERANCE_SECONDS = PERIOD_SECONDS;
const ISSUER = 'tagtrail';

export interface TotpStatus {
  enabled: boolean;
  enabledAt: Date | null;
  /** The organization requires two-factor sign-in of every member. */
  required: boolean;
  /** Unused recovery codes; 0 while two-factor sign-in is off. */
  recoveryCodesLeft: number;
}

/** The second factor a sign-in brings: an app's code or a recovery code. */
export interface SecondFactor {
  code?: string | undefined;
  recoveryCode?: string | undefined;
}

const badCode = () => fieldError('code', 'invalid_value', 'code is not the current code of the app');

export interface TotpEnrolment {
  secret: string;
  uri: string;
}

/** Two-factor sign-in with time-based one-time codes (docs/web-app.md "Accounts"). */
export class TotpService {
  constructor(
    private readonly db: Database,
    /** The TOTP secrets are stored sealed (SecretBox): the codes are checked against them. */
    private readonly secrets: SecretBox,
    private readonly now: () => number = Date.now,
  ) {}

  async status(orgId: number, userId: number): Promise<TotpStatus> {
    return this.db.withOrg(orgId, async (tx) => {
      const record = await findTotp(tx, orgId, userId);
      return {
        enabled: record?.enabledAt != null,
        enabledAt: record?.enabledAt ?? null,
        required: await organizationRequiresTotp(tx, orgId),
        recoveryCodesLeft: record?.enabledAt ? record.recoveryCodesLeft : 0,
      };
    });
  }

  /** A new secret for the person's app; not in force until a code from it is confirmed. */
  async startEnrolment(caller: Caller, userId: number, email: string): Promise<TotpEnrolment> {
    const { orgId } = caller;
    const secret = generateSecret();
    const sealed = this.secrets.seal(secret, totpSecretContext(orgId, userId));
    const stored = await this.db.withOrg(caller, (tx) => upsertPendingTotp(tx, orgId, userId, sealed));
    if (!stored) throw conflict('Two-factor sign-in is already on; turn it off first to change the app');
    return { secret, uri: generateURI({ issuer: ISSUER, label: email, secret, period: PERIOD_SECONDS }) };
  }

  /**
   * A valid code from the app turns two-factor sign-in on, with ten recovery codes: returned
   * here once, only their hashes kept.
   */
  async confirmEnrolment(caller: Caller, userId: number, code: string): Promise<string[]> {
    const { orgId } = caller;
    const record = await this.db.withOrg(orgId, (tx) => findTotp(tx, orgId, userId));
    if (!record) throw conflict('Start two-factor enrolment first');
    if (record.enabledAt) throw conflict('Two-factor sign-in is already on');
    const step = await this.validStep(orgId, userId, record.secret, record.lastStep, code);
    const { codes, hashes } = newRecoveryCodes();
    const enabled =
      step !== null && (await this.db.withOrg(caller, (tx) => enableTotp(tx, orgId, userId, step, hashes)));
    if (!enabled) throw badCode();
    return codes;
  }

  /**
   * New recovery codes for a current code of the app; the previous ones stop working.
   * Returned once, only their hashes kept.
   */
  async regenerateRecoveryCodes(caller: Caller, userId: number, code: string): Promise<string[]> {
    const { orgId } = caller;
    const record = await this.db.withOrg(orgId, (tx) => findTotp(tx, orgId, userId));
    if (!record?.enabledAt) throw conflict('Two-factor sign-in is not on');
    const step = await this.validStep(orgId, userId, record.secret, record.lastStep, code);
    if (step === null) throw badCode();
    const { codes, hashes } = newRecoveryCodes();
    await this.db.withOrg(caller, async (tx) => {
      // The step is spent in the same transaction: a refused replay changes no codes.
      if (!(await acceptStep(tx, orgId, userId, step))) throw badCode();
      if (!(await replaceRecoveryCodes(tx, orgId, userId, hashes)))
        throw conflict('Two-factor sign-in is not on');
    });
    return codes;
  }

  /** Turns two-factor sign-in off: needs the current password and a current code. */
  async disable(caller: Caller, userId: number, password: string, code: string): Promise<void> {
    const { orgId } = caller;
    const { user, record, required } = await this.db.withOrg(orgId, async (tx) => ({
      user: await findUser(tx, orgId, userId),
      record: await findTotp(tx, orgId, userId),
      required: await organizationRequiresTotp(tx, orgId),
    }));
    if (!user) throw new ApiError('unauthorized', 'Not signed in');
    if (!(await verifyPassword(user.passwordHash, password))) {
      throw fieldError('current_password', 'invalid_value', 'current password is incorrect');
    }
    if (!record?.enabledAt) throw conflict('Two-factor sign-in is not on');
    if (required) throw conflict('Your organization requires two-factor sign-in; it cannot be turned off');
    if (!(await this.accept(caller, userId, record.lastStep, record.secret, code))) throw badCode();
    await this.db.withOrg(caller, (tx) => deleteTotp(tx, orgId, userId));
  }

  /**
   * An administrator's reset of a member's two-factor sign-in (the member lost the app and
   * the recovery codes): it is off, and every session of theirs ends in the same
   * transaction, so whoever holds the lost device's session is out too. Where the
   * organization requires it, the member enrols again at the next sign-in. Not for oneself:
   * turning one's own off needs the password and a code.
   */
  async resetForMember(caller: Caller, userId: number): Promise<{ email: string }> {
    const { orgId } = caller;
    if (caller.actor.type === 'user' && caller.actor.id === userId) {
      throw conflict('Your own two-factor sign-in is turned off on your account page, with a code');
    }
    return this.db.withOrg(caller, async (tx) => {
      const member = await findMember(tx, orgId, userId);
      if (!member) throw notFound('member');
      if (!(await deleteTotp(tx, orgId, userId))) {
        throw conflict(`${member.email} does not have two-factor sign-in on`);
      }
      await revokeOtherSessions(tx, orgId, userId, null);
      return { email: member.email };
    });
  }

  /**
   * The operator's reset (`tagtrail two-factor reset`), by address: for the one admin who
   * lost the app and the codes, whom no other admin can reset.
   */
  async resetForEmail(caller: Caller, email: string): Promise<{ userId: number; email: string }> {
    const { orgId } = caller;
    const userId = await this.db.withOrg(orgId, (tx) => findMemberIdByEmail(tx, orgId, email.trim()));
    if (userId === null) throw notFound('member');
    return { userId, ...(await this.resetForMember(caller, userId)) };
  }

  /**
   * The second factor of a sign-in whose password was right: nothing to do without TOTP;
   * otherwise 400 on `totp_code` (`required`) when neither a code nor a recovery code was given, 401
   * when it is wrong or used. A recovery code is spent (and the activity log records it).
   */
  async checkSignIn(
    orgId: number,
    user: { id: number; email: string },
    given: SecondFactor,
  ): Promise<{ recoveryCodeUsed: boolean }> {
    const record = await this.db.withOrg(orgId, (tx) => findTotp(tx, orgId, user.id));
    if (!record?.enabledAt) return { recoveryCodeUsed: false };
    if (given.code !== undefined && given.recoveryCode !== undefined) {
      throw fieldError('recovery_code', 'ambiguous_fields', 'send totp_code or recovery_code, not both');
    }
    const caller: Caller = { orgId, actor: { type: 'user', id: user.id, name: user.email } };
    if (given.recoveryCode !== undefined) {
      const normalized = normalizeRecoveryCode(given.recoveryCode);
      const spent =
        normalized !== null &&
        (await this.db.withOrg(caller, (tx) =>
          spendRecoveryCode(tx, orgId, user.id, hashRecoveryCode(normalized)),
        ));
      if (!spent) throw new ApiError('unauthorized', 'Invalid or already used recovery code');
      return { recoveryCodeUsed: true };
    }
    if (given.code === undefined) {
      throw fieldError('totp_code', 'required', 'totp_code is required: this account signs in with a code');
    }
    if (!(await this.accept(caller, user.id, record.lastStep, record.secret, given.code))) {
      throw new ApiError('unauthorized', 'Invalid or already used two-factor code');
    }
    return { recoveryCodeUsed: false };
  }

  async setRequired(caller: Caller, required: boolean): Promise<void> {
    await this.db.withOrg(caller, (tx) => setOrganizationRequiresTotp(tx, caller.orgId, required));
  }

  /** Checks the code (±1 step) and records its step, so the same code is refused after. */
  private async accept(
    caller: Caller,
    userId: number,
    lastStep: number | null,
    secret: string,
    code: string,
  ): Promise<boolean> {
    const step = await this.validStep(caller.orgId, userId, secret, lastStep, code);
    return step !== null && this.db.withOrg(caller, (tx) => acceptStep(tx, caller.orgId, userId, step));
  }

  /** The time step of a valid code (±1 step) newer than `lastStep`, or null; `stored`: the secret as stored. */
  private async validStep(
    orgId: number,
    userId: number,
    stored: string,
    lastStep: number | null,
    code: string,
  ): Promise<number | null> {
    const result = await verify({
      secret: this.secrets.open(stored, totpSecretContext(orgId, userId)),
      token: code,
      period: PERIOD_SECONDS,
      epoch: Math.floor(this.now() / 1000),
      epochTolerance: TOLERANCE_SECONDS,
      ...(lastStep === null ? {} : { afterTimeStep: lastStep }),
    });
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  }
}
