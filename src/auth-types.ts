/**
 * The callers the HTTP layer authenticates, and the ports through which it asks the
 * domains to do so. They live outside src/http/ and outside any domain so that src/http/
 * (infrastructure) depends on no domain, and the domains implement these shapes.
 */

/** The authenticated caller of a public endpoint. */
export interface Principal {
  orgId: number;
  keyId: string;
  scopes: ReadonlySet<string>;
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

export type UserRole = 'admin' | 'member';

/** The signed-in caller of an /internal/ route (`request.session`). */
export interface InternalSession {
  sessionId: string;
  userId: number;
  orgId: number;
  expiresAt: Date;
  user: { id: number; email: string; role: UserRole };
  organization: { id: number; name: string };
}

export interface IssuedSession {
  /** The cookie value: a `use: "session"` JWT naming the web_sessions row. */
  token: string;
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Implemented by the accounts domain (SessionService). */
export interface SessionAuthenticator {
  authenticate(token: string): Promise<InternalSession | null>;
  readonly csrf: { verify(sessionId: string, presented: string | undefined): boolean };
}
