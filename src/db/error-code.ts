/** The `code` of an error (a SQLSTATE from PostgreSQL, an errno name from Node), if it has a string one. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
