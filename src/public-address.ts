/**
 * The service's public address: the origin every link it mails or shows (password reset,
 * invitation) starts with. Never taken from a request: its Host header is the client's to
 * choose, and a forged one would send a victim a link carrying a valid token to the
 * attacker's site ("password reset poisoning"). docs/operations.md "Public address".
 */
export class PublicAddress {
  /** Before the service listens (tests that inject requests, the CLI): what a local browser reaches. */
  private origin = 'http://localhost';

  /** TAGTRAIL_PUBLIC_URL, already checked and reduced to its origin by loadConfig. */
  constructor(private readonly configured?: string) {
    if (configured) this.origin = configured;
  }

  /** The origin links start with (for the start-up warning). */
  get base(): string {
    return this.origin;
  }

  /** Whether people reach the service over https by the operator's setting (a TLS proxy in front, say). */
  get configuredHttps(): boolean {
    return this.configured?.startsWith('https:') === true;
  }

  /** Whether the operator set the address (otherwise links point at this machine). */
  get isConfigured(): boolean {
    return this.configured !== undefined;
  }

  /**
   * The host name of TAGTRAIL_PUBLIC_URL (an IPv6 literal in brackets, as URLs carry it), or
   * null when unset: then only a request can tell what name people reach this machine by.
   */
  get configuredHostname(): string | null {
    return this.configured ? new URL(this.configured).hostname : null;
  }

  /** Once listening, unset: the address the service announces, localhost for a wildcard host. */
  listening(announced: string): void {
    if (this.configured) return;
    const url = new URL(announced);
    if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = 'localhost';
    this.origin = url.origin;
  }

  /** A page of the web app with the token in the fragment, which browsers never send. */
  link(page: string, token: string): string {
    return `${this.origin}${page}#${token}`;
  }
}

/**
 * TAGTRAIL_PUBLIC_URL as its origin, or why it is refused. The web app asks for /internal/ and
 * its files at the root, so it cannot be served under a path prefix: a path is refused rather
 * than links built that lead nowhere.
 */
export function parsePublicUrl(text: string): { origin: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: 'must be an absolute http or https URL (https://tagtrail.example.com)' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { error: 'must be an absolute http or https URL (https://tagtrail.example.com)' };
  if (url.username || url.password) return { error: 'must not carry a user name or password' };
  if (url.search || url.hash || text.includes('?') || text.includes('#'))
    return { error: 'must not have a query or fragment' };
  if (url.pathname !== '/')
    return {
      error: 'must not have a path: the web app is served at the root of its address, not under a prefix',
    };
  return { origin: url.origin };
}
