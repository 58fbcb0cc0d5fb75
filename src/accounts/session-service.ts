import { randomUUID } from 'node:crypto';
import type {
  CheckedSessionToken,
  InternalSession,
  IssuedSession,
  SessionAuthenticator,
  UserRole,
} from '../auth-types.js';
import type { Database } from '../db/pool.js';
import { toWire } from '../http/timestamps.js';
import type { TokenCodec } from '../keys/tokens.js';
import type { CsrfTokens } from './csrf.js';
import {
  deleteEndedSessions,
  endSessionsPastCap,
  findSession,
  insertSession,
  lockUserSessions,
  pruneSessions,
  revokeOtherSessions,
  revokeSession,
  touchSession,
} from './sessions-repository.js';

/** Sessions last 12 hours from sign-in; they are not extended by use. */
export const SESSION_LIFETIME_SECONDS = 12 * 3600;

/**
 * The live sessions one person may hold: a sign-in past it ends their least recently used
 * sessions, so a script signing in over and over does not grow the table without bound.
 * Far above what a person uses (a browser and a phone, a few tabs' sign-ins a day).
 */
export const SESSIONS_PER_USER = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type { InternalSession, IssuedSession };

type SessionClaims = { orgId: number; id: string };

/** What `check` verified; the HTTP layer sees only the bucket (CheckedSessionToken). */
class CheckedToken implements CheckedSessionToken {
  constructor(readonly claims: SessionClaims | null) {}
  get bucket(): string | undefined {
    return this.claims ? `session:${this.claims.id}` : undefined;
  }
}

/** The `Session` shape of docs/web-app.md. */
export interface SessionView {
  user: { id: number; email: string; role: UserRole };
  organization: { id: number; name: string };
  csrf_token: string;
  expires_at: string;
  totp_enrolment_required: boolean;
}

/**
 * Web sessions: a row per sign-in, and a token that names it. The token alone is never
 * enough: the row is read on every request, so sign-out and revocation take effect at once.
 */
export class SessionService implements SessionAuthenticator {
  constructor(
    private readonly db: Database,
    private readonly tokens: TokenCodec,
    readonly csrf: CsrfTokens,
    private readonly now: () => number = Date.now,
  ) {}

  async create(orgId: number, userId: number): Promise<IssuedSession> {
    const sessionId = randomUUID();
    // Whole seconds: the token's `exp` and the row's expires_at name the same instant.
    const expiresAtSeconds = Math.floor(this.now() / 1000) + SESSION_LIFETIME_SECONDS;
    const expiresAt = new Date(expiresAtSeconds * 1000);
    await this.db.withOrg(orgId, async (tx) => {
      await lockUserSessions(tx, orgId, userId);
      await pruneSessions(tx, orgId, userId);
      await insertSession(tx, orgId, { id: sessionId, userId, expiresAt });
      await endSessionsPastCap(tx, orgId, userId, sessionId, SESSIONS_PER_USER - 1);
    });
    const token = await this.tokens.sign({
      use: 'session',
      id: sessionId,
      orgId,
      scopes: [],
      expiresAt: expiresAtSeconds,
    });
    return { token, sessionId, csrfToken: this.csrf.tokenFor(sessionId), expiresAt };
  }

  /**
   * The token verified once, for the rate limit and then `authenticate`. The bucket is per
   * session, not per person or organization: one busy tab does not lock out colleagues.
   */
  async check(token: string): Promise<CheckedSessionToken> {
    return new CheckedToken(await this.sessionClaims(token));
  }

  /**
   * The live session a cookie names, or null (bad or expired token, revoked or expired row).
   * A checked token is not verified again; anything claiming to be one that `check` did not
   * make is refused.
   */
  async authenticate(token: string | CheckedSessionToken): Promise<InternalSession | null> {
    const claims =
      typeof token === 'string'
        ? await this.sessionClaims(token)
        : token instanceof CheckedToken
          ? token.claims
          : null;
    if (!claims) return null;
    const { orgId, id } = claims;
    const record = await this.db.withOrg(orgId, async (tx) => {
      const found = await findSession(tx, orgId, id);
      // Once a minute at most: which sessions were used last decides which a sign-in past
      // the cap ends, and a write per request would cost more than that needs.
      if (found?.touchDue && found.revokedAt === null) await touchSession(tx, orgId, id);
      return found;
    });
    if (!record || record.revokedAt !== null || record.expiresAt.getTime() <= this.now()) return null;
    return {
      sessionId: record.id,
      userId: record.userId,
      orgId: record.orgId,
      expiresAt: record.expiresAt,
      user: { id: record.userId, email: record.email, role: record.role },
      organization: { id: record.orgId, name: record.organizationName },
      totpEnrolmentRequired: record.totpEnrolmentRequired,
    };
  }

  /** The claims of a genuine, unexpired session token; null for anything else. */
  private async sessionClaims(token: string): Promise<SessionClaims | null> {
    const verified = await this.tokens.verify(token);
    if (!verified.ok || verified.claims.use !== 'session' || !UUID.test(verified.claims.id)) return null;
    return verified.claims;
  }

  /**
   * Whether the session still authenticates (not revoked, not expired, its person not
   * removed): for a request that outlives its authentication, the live stream.
   */
  async isLive(orgId: number, sessionId: string): Promise<boolean> {
    const record = await this.db.readWithOrg(orgId, (tx) => findSession(tx, orgId, sessionId));
    return record !== null && record.revokedAt === null && record.expiresAt.getTime() > this.now();
  }

  async revoke(orgId: number, sessionId: string): Promise<void> {
    await this.db.withOrg(orgId, (tx) => revokeSession(tx, orgId, sessionId));
  }

  /** Ends every other session of the user (after a password change); returns how many. */
  revokeOthers(orgId: number, userId: number, keepSessionId: string | null): Promise<number> {
    return this.db.withOrg(orgId, (tx) => revokeOtherSessions(tx, orgId, userId, keepSessionId));
  }

  /**
   * Deletes the rows of every ended session (expired or revoked), so the table holds live
   * sessions only; returns how many. A cookie naming a deleted row gets the same 401 as
   * one naming an ended session.
   */
  sweepEnded(): Promise<number> {
    return this.db.system((tx) => deleteEndedSessions(tx, new Date(this.now())));
  }

  view(session: InternalSession): SessionView {
    return {
      user: session.user,
      organization: session.organization,
      csrf_token: this.csrf.tokenFor(session.sessionId),
      expires_at: toWire(session.expiresAt),
      totp_enrolment_required: session.totpEnrolmentRequired === true,
    };
  }
}
