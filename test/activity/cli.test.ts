/**
 * `tagtrail activity export`, compiled and run as a process against the test database.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, runCli } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('tagtrail activity export', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let dir: string;
  let org: number;
  const cli = (...args: string[]) => runCli(database.url, dir, args);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-activity-cli-'));
    [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
    org = JSON.parse((await cli('org', 'create', '--name', 'Audited', '--json')).stdout).id;
    const key = await cli(
      'key',
      'mint',
      '--org',
      String(org),
      '--scopes',
      'assets:read',
      '--name',
      'k1',
      '--json',
    );
    expect(key.code, key.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the log as NDJSON to standard output or a file, with the operator as actor', async () => {
    const out = await cli('activity', 'export', '--org', String(org));
    expect(out.code, out.stderr).toBe(0);
    const entries = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries.map((e) => [e.entity_type, e.action])).toEqual([
      ['organization', 'created'],
      ['api_key', 'created'],
    ]);
    expect(entries[1].actor.type).toBe('cli');
    expect(entries[1].after).toMatchObject({ name: 'k1', scopes: ['assets:read'] });

    const file = join(dir, 'activity.ndjson');
    const toFile = await cli('activity', 'export', '--org', String(org), '--out', file);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stderr).toContain('2 entries written');
    expect(await readFile(file, 'utf8')).toBe(out.stdout);

    const later = await cli('activity', 'export', '--org', String(org), '--since', '2999-01-01T00:00:00Z');
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toBe('');
  });

  it('refuses a bad --since and an unknown organization', async () => {
    const bad = await cli('activity', 'export', '--org', String(org), '--since', 'yesterday');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--since must be an RFC 3339 timestamp');
    const missing = await cli('activity', 'export', '--org', '2147483000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('organization 2147483000 not found');
  });
});
