/**
 * A listener that cannot bind its HOST fails with the socket's code alone (`getaddrinfo
 * ENOTFOUND x`, `listen EADDRNOTAVAIL 10.0.0.9:1883`), naming a port or nothing; the
 * operator needs the setting to change. Undefined for any other failure.
 */
export function hostUnusable(err: unknown, host: string): Error | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (!code || !HOST_CODES.has(code)) return undefined;
  const why = code === 'EADDRNOTAVAIL' ? 'it is not an address of this machine' : 'the name does not resolve';
  return new Error(
    `HOST=${host} cannot be listened on: ${why} (${code}); set HOST to an address of this machine, or 0.0.0.0 for all of them`,
  );
}

const HOST_CODES = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL']);
