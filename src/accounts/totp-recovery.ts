import { createHash, randomBytes } from 'node:crypto';

/** How many recovery codes a person holds after enrolment or regeneration. */
export const RECOVERY_CODE_COUNT = 10;

/** RFC 4648 base32, lower case: no 0/1/8/9 to mistake for letters. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** 16 characters of 5 bits: 80 random bits, far beyond guessing within the sign-in limit. */
const CODE_CHARS = 16;

/** A new code, as shown: four groups of four (`abcd-efgh-ijkl-mnop`). */
export function newRecoveryCode(): string {
  const bytes = randomBytes(CODE_CHARS);
  let out = '';
  for (let i = 0; i < CODE_CHARS; i++) {
    if (i > 0 && i % 4 === 0) out += '-';
    // 256 is a multiple of 32, so taking the low five bits keeps every character equally likely.
    out += ALPHABET[bytes[i]! & 31];
  }
  return out;
}

/** The code as typed, without dashes, spaces and case; null when it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | null {
  const code = typed.toLowerCase().replace(/[\s-]/g, '');
  return code.length === CODE_CHARS && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

/**
 * What is stored: SHA-256 of the normalized code. 80 random bits make a slow hash
 * unnecessary: nobody can enumerate the codes to match a leaked hash.
 */
export const hashRecoveryCode = (normalized: string) =>
  createHash('sha256').update(normalized, 'utf8').digest('hex');

/** A fresh set: the codes to show once, and the hashes to keep. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  return { codes, hashes: codes.map((c) => hashRecoveryCode(normalizeRecoveryCode(c)!)) };
}
