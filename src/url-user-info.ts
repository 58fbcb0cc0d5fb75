/**
 * Query parameters that carry a secret: libpq takes `password` (and `sslpassword`) in a
 * connection URL's query as it does in its user information, and other clients take
 * tokens there.
 */
const SECRET_PARAMETER = /([?&;](?:password|passwd|pwd|sslpassword|secret|token|access_token)=)[^&;#]*/gi;

/**
 * A URL setting as it may be shown (logs, error messages): its user information, which
 * may hold a password (`mqtt://user:password@host`), replaced by `(hidden)`, and so are the
 * values of query parameters that carry one (`postgres://db/tagtrail?password=…`). Works
 * on text that does not parse as a URL too, since a mistyped one is exactly what error
 * messages repeat: everything between the scheme's `//` (or the start) and the last `@`
 * goes.
 */
export function hideUserInfo(value: string): string {
  const shown = value.replace(SECRET_PARAMETER, '$1(hidden)');
  const at = shown.lastIndexOf('@');
  if (at < 0) return shown;
  const slashes = shown.indexOf('//');
  const from = slashes >= 0 && slashes < at ? slashes + 2 : 0;
  return `${shown.slice(0, from)}(hidden)${shown.slice(at)}`;
}
