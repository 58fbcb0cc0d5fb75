import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets the service must read back to use (webhook signing secrets, TOTP secrets, the
 * token signing key) are kept sealed in the database: AES-256-GCM under a key that lives
 * outside it (docs/operations.md, "Secrets at rest"), so a dump or a backup of the
 * database alone does not give them away. Each sealed value names its key, so a key ring
 * can open what older keys sealed while the newest seals; and each is bound to where it is
 * stored (`context`), so a sealed value copied into another row or column does not open.
 */

/** Bytes of a key: AES-256. */
export const SECRET_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sealed form: `tt1:<key id>:<base64url of iv, ciphertext and tag>`. */
const PREFIX = 'tt1:';
const SEALED = /^tt1:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/;

/** A key's public name: the first 4 bytes of its SHA-256, in hex. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A stored value that a key this instance lacks sealed; or a damaged one. */
export class SecretUnavailable extends Error {
  constructor(
    message: string,
    /** The key the value names, when it names one. */
    readonly keyId: string | null,
  ) {
    super(message);
  }
}

export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  /** The key that seals; null: values are stored as given (no key configured). */
  readonly sealingKeyId: string | null;

  /** `keys`: the first seals, every one opens. None: nothing is sealed. */
  constructor(keys: readonly Buffer[]) {
    for (const key of keys) {
      if (key.byteLength !== SECRET_KEY_BYTES) throw new Error(`a secret key is ${SECRET_KEY_BYTES} bytes`);
    }
    this.keys = new Map(keys.map((k) => [keyId(k), k]));
    this.sealingKeyId = keys[0] ? keyId(keys[0]) : null;
  }

  /** Every key id this box opens, the sealing one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Whether `stored` is in the sealed form (as opposed to a value kept as given). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  /** The key a sealed value names; null for a value kept as given. */
  static keyIdOf(stored: string): string | null {
    return SEALED.exec(stored)?.[1] ?? null;
  }

  /** `plain` sealed under the sealing key, bound to `context`; as given when there is no key. */
  seal(plain: string, context: string): string {
    if (this.sealingKeyId === null) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.sealingKeyId)!, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.sealingKeyId}:${body.toString('base64url')}`;
  }

  /**
   * The secret in `stored`: opened when sealed, as it is otherwise (a value stored before
   * sealing began, or by an instance without a key; the next start seals it). Throws
   * SecretUnavailable when the key it names is not in this box, or the value does not open
   * (damaged, or moved from another `context`).
   */
  open(stored: string, context: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const match = SEALED.exec(stored);
    if (!match) throw new SecretUnavailable('a sealed secret is damaged', null);
    const id = match[1]!;
    const key = this.keys.get(id);
    if (!key) throw new SecretUnavailable(`a secret is sealed under key ${id}, which is not configured`, id);
    const body = Buffer.from(match[2]!, 'base64url');
    if (body.byteLength < IV_BYTES + TAG_BYTES) throw new SecretUnavailable('a sealed secret is damaged', id);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(body.subarray(body.byteLength - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(body.subarray(IV_BYTES, body.byteLength - TAG_BYTES)),
        decipher.final(),
      ]);
      return plain.toString('utf8');
    } catch {
      throw new SecretUnavailable(
        `a secret sealed under key ${id} does not open here (damaged or moved)`,
        id,
      );
    }
  }

  /** Whether `stored` should be sealed again: kept as given, or sealed under an older key. */
  needsResealing(stored: string): boolean {
    if (this.sealingKeyId === null) return false;
    return SecretBox.keyIdOf(stored) !== this.sealingKeyId;
  }
}
