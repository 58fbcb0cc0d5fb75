import { randomBytes } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDataDirectory } from '../make-directories.js';
import { SECRET_KEY_BYTES, SecretBox } from './secret-box.js';

/** The key file of a deployment on the embedded database, in its data directory. */
export const KEY_FILE = 'secret-keys';

/**
 * Keys as TAGTRAIL_SECRET_KEYS (or the key file) gives them: base64 or base64url of 32
 * bytes each, separated by commas or line breaks, the sealing key first. Throws a message
 * that names the setting and never the keys.
 */
export function parseSecretKeys(text: string, source: string): Buffer[] {
  const items = text
    .split(/[,\r\n]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new Error(`${source}: no key`);
  return items.map((item, i) => {
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(item) ? Buffer.from(item, 'base64') : Buffer.alloc(0);
    if (key.byteLength !== SECRET_KEY_BYTES) {
      throw new Error(
        `${source}: key ${i + 1} is not ${SECRET_KEY_BYTES} bytes in base64 (openssl rand -base64 32)`,
      );
    }
    return key;
  });
}

/** A new key in the form TAGTRAIL_SECRET_KEYS takes. */
export function newSecretKey(): string {
  return randomBytes(SECRET_KEY_BYTES).toString('base64');
}

export interface KeyRingSettings {
  TAGTRAIL_SECRET_KEYS?: string | undefined;
  DATABASE_URL?: string | undefined;
  dataDir: string;
}

/**
 * The deployment's secret keys: TAGTRAIL_SECRET_KEYS when set; else, on the embedded
 * database, the key file in the data directory, made on first start (readable by the
 * owner only; of two starts racing, the second reads the first's key); else none, and
 * secrets are stored as given (the service warns: `sealed` is false).
 */
export async function loadSecretBox(settings: KeyRingSettings): Promise<{ box: SecretBox; source: string }> {
  if (settings.TAGTRAIL_SECRET_KEYS) {
    return {
      box: new SecretBox(parseSecretKeys(settings.TAGTRAIL_SECRET_KEYS, 'TAGTRAIL_SECRET_KEYS')),
      source: 'TAGTRAIL_SECRET_KEYS',
    };
  }
  if (settings.DATABASE_URL) return { box: new SecretBox([]), source: 'none' };
  const file = join(settings.dataDir, KEY_FILE);
  await makeDataDirectory(settings.dataDir);
  // Written whole under another name, then linked into place: a start racing this one
  // sees either no file or a whole one, and link refuses to replace a key already there.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${newSecretKey()}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(draft, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } finally {
    await unlink(draft);
  }
  return { box: new SecretBox(parseSecretKeys(await readFile(file, 'utf8'), file)), source: file };
}
