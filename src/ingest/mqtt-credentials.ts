import { pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * MQTT credentials of readers. The password is a random 256-bit secret shown once; the
 * database keeps only its hash, in the format of Mosquitto's password file
 * (`$7$<iterations>$<salt base64>$<hash base64>`, PBKDF2-SHA512 with a 12-byte salt and
 * a 64-byte key, as mosquitto_passwd 2.x writes it), so that an external Mosquitto can
 * check the same passwords. The secret's entropy, not the iteration count, is what makes
 * it unguessable, so Mosquitto's default of 101 iterations is enough.
 */
export const MQTT_HASH_ITERATIONS = 101;
const SALT_BYTES = 12;
const KEY_BYTES = 64;
const HASH_FORMAT = /^\$7\$(\d{1,7})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

/** The broker user name of a reader: reader ids are unique across organizations. */
export const readerUsername = (readerId: number) => `reader-${readerId}`;

/** The reader id a broker user name stands for, or null when it is not a reader's. */
export function readerIdOfUsername(username: string): number | null {
  const match = /^reader-([1-9]\d{0,9})$/.exec(username);
  if (!match) return null;
  const id = Number(match[1]);
  return id <= 2147483647 ? id : null;
}

/** A new reader password: 32 random bytes, base64url (43 characters, no padding). */
export const generateMqttPassword = () => randomBytes(32).toString('base64url');

export function hashMqttPassword(password: string, iterations = MQTT_HASH_ITERATIONS): string {
  const salt = randomBytes(SALT_BYTES);
  const key = pbkdf2Sync(password, salt, iterations, KEY_BYTES, 'sha512');
  return `$7$${iterations}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether `password` matches a `$7$` hash; false for anything malformed. Constant time in the key. */
export function verifyMqttPassword(password: string | Buffer, hash: string): boolean {
  const match = HASH_FORMAT.exec(hash);
  if (!match) return false;
  const iterations = Number(match[1]);
  const expected = Buffer.from(match[3]!, 'base64');
  if (iterations < 1 || expected.length !== KEY_BYTES) return false;
  const given = pbkdf2Sync(password, Buffer.from(match[2]!, 'base64'), iterations, KEY_BYTES, 'sha512');
  return timingSafeEqual(given, expected);
}
