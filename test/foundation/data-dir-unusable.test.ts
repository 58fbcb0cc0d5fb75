import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { restoreBackup } from '../../src/db/restore.js';
import { loadSecretBox } from '../../src/secrets/key-ring.js';

/**
 * A TAGTRAIL_DATA_DIR that cannot be made stops `serve`, a command and a restore with a
 * message naming the setting; it used to be mkdir's errno line alone
 * (`ENOTDIR: not a directory, mkdir '…'`), which does not say where the path came from.
 */
describe('a data directory that cannot be made', () => {
  let work: string;
  let dataDir: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tagtrail-datadir-unusable-'));
    // A path through a regular file: mkdir fails with ENOTDIR, as for a mistyped setting.
    await writeFile(join(work, 'file'), '');
    dataDir = join(work, 'file', 'data');
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  const named = () =>
    expect.objectContaining({
      message: expect.stringMatching(
        new RegExp(`^cannot make the data directory ${dataDir} \\(TAGTRAIL_DATA_DIR\\): ENOTDIR`),
      ),
    });

  it('stops the embedded PostgreSQL start naming TAGTRAIL_DATA_DIR', async () => {
    await expect(startEmbeddedPostgres(dataDir)).rejects.toEqual(named());
  });

  it('stops the making of the secret-keys file naming TAGTRAIL_DATA_DIR', async () => {
    await expect(loadSecretBox({ dataDir })).rejects.toEqual(named());
  });

  it('stops a restore naming TAGTRAIL_DATA_DIR', async () => {
    await expect(restoreBackup(Readable.from([]), dataDir)).rejects.toEqual(named());
  });
});
