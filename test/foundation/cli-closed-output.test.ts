/**
 * A command whose standard output's reader goes away (`tagtrail export assets | head`)
 * stops quietly and cleanly with 141, as a shell reports a writer its pipe's reader left,
 * instead of "tagtrail: write EPIPE" and 1 (or 0, when the output happened to fit the pipe).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, childEnv, MAIN, ROOT, runCli } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('a command whose output is closed by its reader', () => {
  let target: TestDatabase;
  let dir: string;
  let org: number;
  beforeAll(async () => {
    await buildIfStale();
    target = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-closed-output-'));
    const created = await runCli(target.url, dir, ['org', 'create', '--name', 'Piped', '--json']);
    org = (JSON.parse(created.stdout) as { id: number }).id;
    // Far more than a pipe holds (64 KiB), so the export is still writing when the reader leaves.
    const rows = Array.from({ length: 2000 }, (_, i) => `K${i},Asset ${i},${'x'.repeat(200)}`);
    await writeFile(join(dir, 'assets.csv'), `external_key,name,description\n${rows.join('\n')}\n`);
    const imported = await runCli(target.url, dir, [
      'import',
      'assets',
      join(dir, 'assets.csv'),
      '--org',
      String(org),
    ]);
    expect(imported.code, imported.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await target?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `args`, closes its standard output after the first chunk, and waits for its end. */
  function readFirstChunk(args: string[]): Promise<{ code: number | null; stderr: string; read: number }> {
    const env = childEnv({ DATABASE_URL: target.url, TAGTRAIL_DATA_DIR: dir, LOG_LEVEL: 'silent' });
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let read = 0;
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.stdout.once('data', (c: Buffer) => {
      read = c.length;
      child.stdout.destroy();
    });
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr, read }));
    });
  }

  it.each([
    ['export', 'assets'],
    ['activity', 'export'],
  ])(
    '%s %s stops with 141 and says nothing',
    async (...command) => {
      const result = await readFirstChunk([...command, '--org', String(org)]);
      expect(result.read).toBeGreaterThan(0);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(141);
    },
    60_000,
  );

  it('writes the whole export when its reader reads it all', async () => {
    const result = await runCli(target.url, dir, ['export', 'assets', '--org', String(org)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(2001);
  }, 60_000);
});
