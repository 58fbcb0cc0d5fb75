import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/**
 * Password hashing: argon2id (the package's default algorithm, asserted below) with its
 * default cost (19 MiB, 2 passes), encoded as a PHC string that carries its parameters.
 */
export const PASSWORD_MIN_LENGTH = 8;
/** Long enough for any passphrase; bounded so a request cannot make hashing expensive. */
export const PASSWORD_MAX_LENGTH = 1024;

export async function hashPassword(password: string): Promise<string> {
  const encoded = await hash(password);
  if (!encoded.startsWith('$argon2id$')) throw new Error('argon2 did not produce an argon2id hash');
  return encoded;
}

let dummy: Promise<string> | undefined;

/**
 * Checks a password against a stored hash. Without a hash (no such user, or a user with
 * no password) it still runs one verification against a throwaway hash, so the answer
 * takes as long whether or not the account exists.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummy ??= hash(randomBytes(16).toString('hex'));
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** A password nobody knows, for accounts created by operators (`tagtrail session token`). */
export const randomPassword = () => randomBytes(24).toString('base64url');
