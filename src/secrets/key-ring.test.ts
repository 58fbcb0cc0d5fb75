import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_FILE, loadSecretBox, newSecretKey, parseSecretKeys } from './key-ring.js';
import { keyId } from './secret-box.js';

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-keys-'));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('parseSecretKeys', () => {
  it('takes base64 and base64url keys separated by commas or lines, the first first', () => {
    const a = Buffer.alloc(32, 0xfb);
    const b = Buffer.alloc(32, 0x3f);
    const keys = parseSecretKeys(`${a.toString('base64')}, ${b.toString('base64url')}\n`, 'X');
    expect(keys.map((k) => k.toString('hex'))).toEqual([a.toString('hex'), b.toString('hex')]);
  });

  it('refuses a key of the wrong length or alphabet by its position, without showing it', () => {
    const short = Buffer.alloc(16, 9).toString('base64');
    expect(() => parseSecretKeys(`${newSecretKey()},${short}`, 'TAGTRAIL_SECRET_KEYS')).toThrow(
      /^TAGTRAIL_SECRET_KEYS: key 2 is not 32 bytes/,
    );
    const refusal = (() => {
      try {
        parseSecretKeys(short, 'K');
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(refusal).toMatch(/^K: key 1 is not 32 bytes/);
    expect(refusal).not.toContain(short);
    expect(() => parseSecretKeys('not a key!', 'K')).toThrow(/key 1/);
    expect(() => parseSecretKeys(' , ', 'K')).toThrow(/no key/);
  });
});

describe('loadSecretBox', () => {
  it('uses TAGTRAIL_SECRET_KEYS when set, on any database', async () => {
    const key = newSecretKey();
    const dataDir = await tempDir();
    const { box, source } = await loadSecretBox({ TAGTRAIL_SECRET_KEYS: key, dataDir });
    expect(source).toBe('TAGTRAIL_SECRET_KEYS');
    expect(box.sealingKeyId).toBe(keyId(Buffer.from(key, 'base64')));
    await expect(stat(join(dataDir, KEY_FILE))).rejects.toThrow();
  });

  it('makes the key file on the embedded database once, readable by its owner only', async () => {
    const dataDir = await tempDir();
    const starts = await Promise.all(Array.from({ length: 5 }, () => loadSecretBox({ dataDir })));
    const ids = new Set(starts.map((s) => s.box.sealingKeyId));
    expect(ids.size).toBe(1);
    const file = join(dataDir, KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await loadSecretBox({ dataDir });
    expect(again.box.sealingKeyId).toBe(starts[0]!.box.sealingKeyId);
    expect(again.source).toBe(file);
    expect(parseSecretKeys(await readFile(file, 'utf8'), file)).toHaveLength(1);
  });

  it('has no key on DATABASE_URL without TAGTRAIL_SECRET_KEYS', async () => {
    const dataDir = await tempDir();
    const { box, source } = await loadSecretBox({ DATABASE_URL: 'postgres://x/y', dataDir });
    expect(box.sealingKeyId).toBeNull();
    expect(source).toBe('none');
  });
});
