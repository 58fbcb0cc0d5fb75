import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Who runs the embedded server of a data directory: `serve` (the service) or another
 * command (a backup, `key mint` on a stopped service). The process that starts the server
 * stops it when done, so whoever joins it must know whose it is (startEmbeddedPostgres).
 */
export type EmbeddedRole = 'service' | 'command';

export interface EmbeddedOwner {
  pid: number;
  role: EmbeddedRole;
}

const ownerFile = (dataDir: string) => join(dataDir, 'postgres.owner');

export async function recordOwner(dataDir: string, role: EmbeddedRole): Promise<void> {
  await writeFile(ownerFile(dataDir), JSON.stringify({ pid: process.pid, role }), { mode: 0o600 });
}

export async function forgetOwner(dataDir: string): Promise<void> {
  await rm(ownerFile(dataDir), { force: true });
}

/** The process that started the running server, while it lives; null for none or a dead one. */
export async function liveOwner(dataDir: string): Promise<EmbeddedOwner | null> {
  const file = ownerFile(dataDir);
  if (!existsSync(file)) return null;
  let owner: EmbeddedOwner;
  try {
    owner = JSON.parse(await readFile(file, 'utf8')) as EmbeddedOwner;
  } catch {
    return null;
  }
  return Number.isInteger(owner.pid) && owner.pid > 0 && isAlive(owner.pid) ? owner : null;
}

/**
 * Whether a process starting as `role` waits for the server `owner` runs to exit instead
 * of joining it. The service joins no other live process's server: that process stops it
 * when done (a backup of a stopped service), or is another service on the same directory.
 * A command joins whatever runs, as it always did (two commands at once on a stopped
 * service can still strand the second). A server whose owner is gone (killed outright,
 * its server left running) is stopped by nobody and joined; so is one of this very process.
 */
export function waitsFor(owner: EmbeddedOwner | null, role: EmbeddedRole): boolean {
  return owner !== null && owner.pid !== process.pid && role === 'service';
}

/** The postmaster already running on this data directory (another process of ours). */
export async function runningServer(pgDir: string): Promise<{ pid: number; port: number } | null> {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = (await readFile(pidFile, 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid && port && isAlive(pid) ? { pid, port } : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
