import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { buildIfStale, postmasterPid } from './compiled.js';

/**
 * For a test file whose commands start the embedded server themselves: a stopped service's
 * data directory under a temporary `root`, made (and the build brought up to date) before
 * the file's tests, and removed after them with any server a test left running on it.
 * Read `root` and `dataDir` inside tests, once the hooks have run.
 */
export function stoppedDataDirectory(prefix: string): { root: string; dataDir: string } {
  const dirs = { root: '', dataDir: '' };
  beforeAll(async () => {
    dirs.root = await mkdtemp(join(tmpdir(), prefix));
    // The embedded server runs as its own user when the tests run as root: it must reach in.
    await chmod(dirs.root, 0o755);
    dirs.dataDir = join(dirs.root, 'data');
    await buildIfStale();
    await (await startEmbeddedPostgres(dirs.dataDir)).stop();
  }, 180_000);
  afterAll(async () => {
    const pid = await postmasterPid(dirs.dataDir).catch(() => null);
    if (pid !== null) process.kill(pid, 'SIGINT');
    await rm(dirs.root, { recursive: true, force: true });
  });
  return dirs;
}
