import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../src/db/embedded.js';
import type { EmbeddedOwner } from '../../src/db/embedded-owner.js';
import { buildIfStale, postmasterPid, ROOT } from '../helpers/compiled.js';
import { alive } from '../helpers/orphan.js';
import { query } from '../helpers/pg-query.js';

/**
 * A build from before postgres.owner (2026-12-01) runs its embedded server without a
 * record. Upgrading from it, the operator runs the new build's `backup` and `migrate
 * --check` beside the old service (docs/operations.md, "Upgrading"): those commands must
 * join its server, and a new `serve` wait for it, not take it for an orphan and stop it
 * under the running service (what the upgrade audit saw: the old service's connections
 * terminated, and the command failed on the postmaster.pid its restart had written).
 * The old service is played by a process started with `serve` in its arguments that
 * starts the server and removes the record, as the old build never wrote one.
 */
const START_UNRECORDED = `
const { startEmbeddedPostgres } = await import(process.argv[1]);
const { rm } = await import('node:fs/promises');
await startEmbeddedPostgres(process.argv[2], { role: 'service' });
await rm(process.argv[2] + '/postgres.owner');
process.stdout.write('ready\\n');
setInterval(() => undefined, 1 << 30);
`;

describe('embedded PostgreSQL run by a build from before the owner record', () => {
  let dir: string;
  let oldService: ChildProcess | undefined;
  const started: EmbeddedPostgres[] = [];

  beforeAll(async () => {
    await buildIfStale();
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-unrecorded-owner-'));
    oldService = spawn(
      process.execPath,
      ['--input-type=module', '-e', START_UNRECORDED, join(ROOT, 'dist/src/db/embedded.js'), dir, 'serve'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      let out = '';
      oldService?.stdout?.on('data', (c) => {
        out += c;
        if (out.includes('ready')) resolve();
      });
      oldService?.once('exit', (code) => reject(new Error(`the old service exited (${code})`)));
    });
  }, 120_000);
  afterAll(async () => {
    for (const s of started) await s.stop().catch(() => undefined);
    oldService?.kill('SIGINT');
    const pid = await postmasterPid(dir).catch(() => null);
    if (pid !== null && alive(pid)) process.kill(pid, 'SIGINT');
    while (pid !== null && alive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
    await rm(dir, { recursive: true, force: true });
  });

  it('a command joins its server and leaves it running; a service waits for it', {
    timeout: 60_000,
  }, async () => {
    expect(existsSync(join(dir, 'postgres.owner'))).toBe(false);
    const postmaster = await postmasterPid(dir);
    const notices: string[] = [];
    const command = await startEmbeddedPostgres(dir, { role: 'command', onNotice: (l) => notices.push(l) });
    started.push(command);
    expect(command.owned).toBe(false);
    expect(notices).toEqual([]);
    expect(await query(command.adminUrl, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await command.stop();
    expect(await postmasterPid(dir)).toBe(postmaster);
    expect(alive(postmaster!)).toBe(true);

    const waits: EmbeddedOwner[] = [];
    const abort = new AbortController();
    const service = startEmbeddedPostgres(dir, {
      role: 'service',
      onWait: (o) => waits.push(o),
      signal: abort.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    abort.abort();
    await expect(service).rejects.toThrow();
    expect(waits).toEqual([{ pid: oldService?.pid, role: 'service' }]);
    expect(await postmasterPid(dir)).toBe(postmaster);
  });
});
