/**
 * Query parameters that carry a secret, compared without case: libpq takes `password` (and
 * `sslpassword`) in a connection URL's query as it does in its user information, and
 * clients and APIs take tokens and keys there.
 */
const SECRET_NAMES =
  /^(?:password|passwd|pwd|sslpassword|token|access_token|refresh_token|api_key|apikey|secret|client_secret|signature)$/i;

/**
 * A URL (absolute, a request target, or text that only looks like one) with the value of
 * each secret query parameter replaced by `shown`; the rest is kept as written. A name is
 * judged unescaped (`pass%77ord` is `password`), or as written when its escape is malformed.
 */
export function hideSecretParameters(url: string, shown: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const hash = url.indexOf('#', at);
  const query = url.slice(at + 1, hash < 0 ? undefined : hash);
  // The separators kept in the list (odd places): `;` separates pairs too in some clients.
  const masked = query
    .split(/([&;])/)
    .map((pair, i) => {
      const eq = pair.indexOf('=');
      if (i % 2 === 1 || eq < 0) return pair;
      const raw = pair.slice(0, eq);
      let name = raw;
      try {
        name = decodeURIComponent(raw.replaceAll('+', ' '));
      } catch {
        // A malformed escape: judge the name as written.
      }
      return SECRET_NAMES.test(name.trim()) ? `${raw}=${shown}` : pair;
    })
    .join('');
  return `${url.slice(0, at)}?${masked}${hash < 0 ? '' : url.slice(hash)}`;
}

/**
 * A URL setting as it may be shown (logs, error messages): its user information, which
 * may hold a password (`mqtt://user:password@host`), replaced by `(hidden)`, and so are the
 * values of query parameters that carry one (`postgres://db/tagtrail?password=…`). Works
 * on text that does not parse as a URL too, since a mistyped one is exactly what error
 * messages repeat: everything between the scheme's `//` (or the start) and the last `@`
 * goes.
 */
export function hideUserInfo(value: string): string {
  const shown = hideSecretParameters(value, '(hidden)');
  const at = shown.lastIndexOf('@');
  if (at < 0) return shown;
  const slashes = shown.indexOf('//');
  const from = slashes >= 0 && slashes < at ? slashes + 2 : 0;
  return `${shown.slice(0, from)}(hidden)${shown.slice(at)}`;
}
