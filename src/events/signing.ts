import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing (docs/events.md): the secret is `whsec_` + base64 of random
 * bytes; the signature is `v1,` + base64 of HMAC-SHA256, keyed with those bytes, over
 * `<webhook-id>.<webhook-timestamp>.<body>`.
 */
const PREFIX = 'whsec_';

export function newSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of one delivery attempt (timestamp in seconds, as the standard has it). */
export function signedHeaders(secret: string, id: string, body: string, now = Date.now()) {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature(secret, id, timestamp, body),
  };
}

/**
 * A receiver's check: one of the space-separated signatures matches and the timestamp is
 * within `toleranceSeconds` of now (against replays). Used by the tests and shown in docs.
 */
export function verifySignature(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  { toleranceSeconds = 300, now = Date.now() } = {},
): boolean {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigs = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sigs !== 'string') return false;
  const timestamp = Number(ts);
  if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signature(secret, id, timestamp, body));
  return sigs.split(' ').some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
