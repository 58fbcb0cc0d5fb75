/**
 * A command other than `serve` stopped by a signal (src/cli/interrupt.ts): it stops cleanly,
 * whatever it was doing with the embedded database, and exits with 128 + the signal's
 * number. One that started the server stops it and forgets its owner record; one waiting for
 * another command's server stops waiting.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { childEnv, MAIN, postmasterPid, type Running, start } from '../helpers/compiled.js';
import { exited } from '../helpers/orphan.js';
import { stoppedDataDirectory } from '../helpers/stopped-data-dir.js';

const dirs = stoppedDataDirectory('tagtrail-cli-signals-');

function cli(...args: string[]): Running {
  const env = childEnv({ TAGTRAIL_DATA_DIR: dirs.dataDir, LOG_LEVEL: 'silent' });
  return start(process.execPath, [MAIN, ...args], env);
}

describe('a command stopped by a signal', () => {
  it('that started the embedded server: stops it, forgets the owner record, exits 130 on SIGINT', async () => {
    const command = cli('org', 'create', '--name', 'interrupted');
    let postmaster: number | null = null;
    // Once its server has written its pid: running, whether or not it accepts connections yet.
    await vi.waitFor(
      async () => {
        postmaster = await postmasterPid(dirs.dataDir);
        expect(postmaster).not.toBeNull();
      },
      { timeout: 60_000, interval: 20 },
    );
    command.kill('SIGINT');
    const result = await command.result;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('SIGINT: stopping');
    await exited(postmaster as unknown as number);
    expect(existsSync(join(dirs.dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    expect(existsSync(join(dirs.dataDir, 'postgres.owner'))).toBe(false);
  }, 120_000);

  it("waiting for another command's server: stops waiting and exits 143 on SIGTERM", async () => {
    // This test's process plays a backup of the stopped service, which a command waits for.
    const backup = await startEmbeddedPostgres(dirs.dataDir);
    try {
      const command = cli('migrate', '--check');
      await vi.waitFor(() => expect(command.stderr()).toContain('waiting for it to finish before starting'), {
        timeout: 60_000,
        interval: 50,
      });
      command.kill('SIGTERM');
      const result = await command.result;
      expect(result.code, result.stderr).toBe(143);
      // The backup's server and record are the backup's still.
      expect(existsSync(join(dirs.dataDir, 'postgres.owner'))).toBe(true);
    } finally {
      await backup.stop();
    }
  }, 120_000);
});
