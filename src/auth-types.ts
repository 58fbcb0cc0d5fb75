/**
 * The callers the HTTP layer authenticates, and the ports through which it asks the
 * domains to do so. They live outside src/http/ and outside any domain so that src/http/
 * (infrastructure) depends on no domain, and the domains implement these shapes.
 */

/** The authenticated caller of a public endpoint. */
export interface Principal {
  orgId: number;
  /** The organization's name as of the key's check (held current like the key itself). */
  orgName: string;
  keyId: string;
  /** The key's name, recorded in the activity log as who made a change. */
  keyName: string;
  scopes: ReadonlySet<string>;
  /**
   * Set when the key record came from the instance's cache without a round trip: the
   * route's work must run through it, so that its first transaction also checks, in the
   * same snapshot, that the record is still what the cache holds.
   */
  confirmation?: KeyConfirmation;
}

/** How a principal taken from the cache is confirmed (implemented by the keys domain). */
export interface KeyConfirmation {
  /**
   * Runs `work` so that nothing it does in the database stands, and it returns nothing,
   * unless the key is unchanged; rejects with StaleKeyError otherwise (its writes rolled back).
   */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** The principal as the database has it now (throws the 401 when it is no longer valid). */
  fresh(): Promise<Principal>;
}

/** The cached key record the request was admitted with has changed: its work was undone. */
export class StaleKeyError extends Error {
  constructor() {
    super('API key changed since it was cached');
  }
}

/** The credential headers of a public request. */
export interface CredentialHeaders {
  authorization?: string;
  xApiKey?: string;
}

/** A public request's caller, identified from its credential headers before rate limiting. */
export interface ApiCaller {
  /** The rate-limit bucket of a verified API key; undefined when the request has none (then: per address). */
  bucket: string | undefined;
  /** The principal, or the 401 `ApiError` explaining why there is none. */
  authenticate(): Promise<Principal>;
}

/** Implemented by the keys domain (ApiKeyAuthenticator). */
export interface PublicAuthenticator {
  identify(credentials: CredentialHeaders): Promise<ApiCaller>;
}

/**
 * What a person may do in the web app (docs/web-app.md "Roles and members"); each role
 * includes the ones below it: viewer (read only) < editor (master data, imports, handheld
 * submissions) < admin (members, API keys, readers and their credentials).
 */
export type UserRole = 'admin' | 'editor' | 'viewer';

export const USER_ROLES: readonly UserRole[] = ['viewer', 'editor', 'admin'];

/** Whether `role` includes `required`. */
export const roleIncludes = (role: UserRole, required: UserRole): boolean =>
  USER_ROLES.indexOf(role) >= USER_ROLES.indexOf(required);

/** The signed-in caller of an /internal/ route (`request.session`). */
export interface InternalSession {
  sessionId: string;
  userId: number;
  orgId: number;
  expiresAt: Date;
  user: { id: number; email: string; role: UserRole };
  organization: { id: number; name: string };
  /**
   * The organization requires two-factor sign-in and this person has not set it up: the
   * session reaches only the routes marked `totpEnrolment` until they do.
   */
  totpEnrolmentRequired?: boolean;
}

export interface IssuedSession {
  /** The cookie value: a `use: "session"` JWT naming the web_sessions row. */
  token: string;
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * A session cookie's token, verified once (`SessionAuthenticator.check`): the request's
 * rate limit keys on it and `authenticate` takes it, so the signature is checked once per
 * request, a forged one's included. Only `check` makes one.
 */
export interface CheckedSessionToken {
  /**
   * The rate-limit bucket: the session's when the token verifies as a session token;
   * undefined otherwise, and then `authenticate` refuses it without a database read too.
   */
  readonly bucket: string | undefined;
}

/** Implemented by the accounts domain (SessionService). */
export interface SessionAuthenticator {
  /** Verifies a session cookie's token, from the token alone (no database read). */
  check(token: string): Promise<CheckedSessionToken>;
  /** The live session a cookie (or its checked token) names, or null. */
  authenticate(token: string | CheckedSessionToken): Promise<InternalSession | null>;
  readonly csrf: { verify(sessionId: string, presented: string | undefined): boolean };
}
