import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EmbeddedRole } from '../../src/db/embedded-owner.js';
import { buildIfStale, postmasterPid, ROOT } from './compiled.js';

/** A process that starts the embedded server of argv[2] as argv[3], says `ready`, and lives on. */
const START_AND_LIVE = `
const { startEmbeddedPostgres } = await import(process.argv[1]);
await startEmbeddedPostgres(process.argv[2], { role: process.argv[3] });
process.stdout.write('ready\\n');
setInterval(() => undefined, 1 << 30);
`;

/**
 * An embedded server left running by a tagtrail process killed outright (kill -9): the
 * process starts it on `dataDir` as `role`, and dies; its postmaster runs on, parented to
 * init, and its owner record names the dead process. Resolves with the postmaster's pid.
 */
export async function leaveOrphanedServer(dataDir: string, role: EmbeddedRole = 'service'): Promise<number> {
  await buildIfStale();
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', START_AND_LIVE, join(ROOT, 'dist/src/db/embedded.js'), dataDir, role],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c) => {
      out += c;
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`the starter exited (${code}) before its server was ready`)),
    );
  });
  child.kill('SIGKILL');
  await exited;
  const pid = await postmasterPid(dataDir);
  if (pid === null || !alive(pid)) throw new Error('the orphaned server is not running');
  return pid;
}

/** Whether `pid` runs (a zombie, exited but not reaped, does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Until `pid` has exited (the test's timeout bounds the wait). */
export async function exited(pid: number): Promise<void> {
  while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
}
