/**
 * The database could not be reached or could not answer in time: an outage (server
 * restarting or down, network gone) rather than anything wrong with the request. The HTTP
 * layer answers it 503 with Retry-After; ingest leaves the message unacknowledged.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/** Socket-level failures reaching the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away, not accepting connections yet, out of
 * resources, or that cancelled a statement past `statement_timeout`. Not 08P01
 * (protocol_violation): the server refusing what this process sent, such as a message over
 * its 1 GB bound, happens again on every retry; as an outage, a request would be told to
 * come back later and an MQTT message left unacknowledged would be redelivered forever.
 */
const UNAVAILABLE_SQLSTATE = /^(08(?!P01)...|57P0[1-4]|53...|57014)$/;

/** Errors node-postgres raises without a code when a connection is lost or times out. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
];

export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  // Node reports a refused connection to every address of a host name as one AggregateError.
  if (err instanceof AggregateError && err.errors.some(isDatabaseUnavailable)) return true;
  return DRIVER_MESSAGES.some((m) => err.message.includes(m));
}

/**
 * Resolves once `ping` succeeds, trying every `intervalMs`, or as soon as `signal` aborts
 * (shutdown must not wait for the database). For consumers that pause during an outage.
 */
export async function waitUntilAvailable(
  ping: () => Promise<void>,
  signal: AbortSignal,
  intervalMs = 500,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await ping();
      return;
    } catch {
      await new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const timer = setTimeout(done, intervalMs);
        signal.addEventListener('abort', done, { once: true });
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
      });
    }
  }
}
