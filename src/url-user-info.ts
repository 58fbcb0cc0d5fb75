/**
 * A URL setting as it may be shown (logs, error messages): its user information, which
 * may hold a password (`mqtt://user:password@host`), replaced by `(hidden)`. Works on text
 * that does not parse as a URL too, since a mistyped one is exactly what error messages
 * repeat: everything between the scheme's `//` (or the start) and the last `@` goes.
 */
export function hideUserInfo(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const slashes = value.indexOf('//');
  const from = slashes >= 0 && slashes < at ? slashes + 2 : 0;
  return `${value.slice(0, from)}(hidden)${value.slice(at)}`;
}
