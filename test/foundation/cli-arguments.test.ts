/**
 * What every command taking `--org` does with an organization that does not exist (exit 1,
 * the reason on standard error, nothing changed), and what every command does with a
 * malformed option value (exit 2, a usage error), as README's "Exit status" says.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, runCli } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const MISSING = '2147483000';

describe('tagtrail option values', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  let dir: string;
  let org: string;
  const cli = (...args: string[]) => runCli(database.url, dir, args);

  /** Rows of every table a command with `--org` could write to. */
  const counts = async () =>
    (
      await database.db.pool.query(
        `SELECT (SELECT count(*) FROM organizations) AS organizations, (SELECT count(*) FROM api_keys) AS api_keys,
                (SELECT count(*) FROM readers) AS readers, (SELECT count(*) FROM scan_points) AS scan_points,
                (SELECT count(*) FROM assets) AS assets, (SELECT count(*) FROM locations) AS locations,
                (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM web_sessions) AS web_sessions,
                (SELECT count(*) FROM activity) AS activity, (SELECT count(*) FROM raw_log) AS raw_messages`,
      )
    ).rows[0];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-cli-arguments-'));
    [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
    const created = await cli('org', 'create', '--name', 'Present', '--json');
    expect(created.code, created.stderr).toBe(0);
    org = String(JSON.parse(created.stdout).id);
    await writeFile(join(dir, 'assets.csv'), 'external_key,name\nA-1,First\nA-2,Second\n');
    await writeFile(join(dir, 'locations.csv'), 'external_key,name\nL-1,Hall\nL-2,Yard\n');
    await writeFile(
      join(dir, 'scans.ndjson'),
      '{"observed_at":"2026-01-01T00:00:00Z","asset_id":1,"location_id":1}\n',
    );
  }, 180_000);
  afterAll(async () => {
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const orgCommands: string[][] = [
    ['key', 'mint', '--scopes', 'assets:read'],
    ['reader', 'add', '--family', 'generic-json', '--identity', 'r1', '--topic', 'cli/r1'],
    ['reader', 'list', '--json'],
    ['reader', 'mqtt-rotate', '--reader', '1'],
    ['reader', 'mqtt-revoke', '--reader', '1'],
    ['reader', 'delete', '--reader', '1'],
    ['scan-point', 'add', '--reader', '1', '--location', '1'],
    ['scan-point', 'remove', '--reader', '1'],
    ['scans', 'import', 'scans.ndjson', '--json'],
    ['import', 'assets', 'assets.csv'],
    ['import', 'assets', 'assets.csv', '--dry-run', '--json'],
    ['import', 'locations', 'locations.csv'],
    ['import', 'locations', 'locations.csv', '--dry-run', '--json'],
    ['export', 'assets'],
    ['export', 'locations'],
    ['activity', 'export'],
    ['session', 'token', '--json'],
    ['two-factor', 'reset', '--email', 'someone@example.com'],
  ];

  it.each(orgCommands.map((args) => [args.slice(0, 2).join(' '), args] as const))(
    '%s refuses an organization that does not exist and changes nothing',
    async (_name, args) => {
      const before = await counts();
      const withFiles = args.map((a) => (/\.(csv|ndjson)$/.test(a) ? join(dir, a) : a));
      const result = await cli(...withFiles, '--org', MISSING);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toBe(`tagtrail: organization ${MISSING} not found\n`);
      expect(result.stdout).toBe('');
      expect(await counts()).toEqual(before);
      expect(existsSync(join(dir, 'assets.csv.refused.csv'))).toBe(false);
      expect(existsSync(join(dir, 'locations.csv.refused.csv'))).toBe(false);
    },
  );

  const malformed = (): [string, string[], RegExp][] => [
    [
      '--org abc',
      ['key', 'mint', '--org', 'abc', '--scopes', 'assets:read'],
      /'--org <id>' argument 'abc' is invalid/,
    ],
    [
      '--expires-in -5',
      ['key', 'mint', '--org', org, '--scopes', '', '--expires-in', '-5'],
      /--expires-in must be a positive integer/,
    ],
    [
      '--expires-in past ten years',
      ['key', 'mint', '--org', org, '--scopes', '', '--expires-in', '400000000'],
      /--expires-in must be at most 315360000/,
    ],
    [
      '--env staging',
      ['key', 'mint', '--org', org, '--scopes', '', '--env', 'staging'],
      /--env must be production or preview/,
    ],
    ['reader --org 0', ['reader', 'list', '--org', '0'], /--org must be an integer from 1 to 2147483647/],
    ['--reader x', ['reader', 'delete', '--org', org, '--reader', 'x'], /--reader must be an integer/],
    [
      '--antenna',
      ['scan-point', 'remove', '--org', org, '--reader', '1', '--antenna', '70000'],
      /--antenna must be an integer from 0 to 65535/,
    ],
    [
      '--location',
      ['scan-point', 'add', '--org', org, '--reader', '1', '--location', 'x'],
      /--location must be an integer/,
    ],
    ['scans --org', ['scans', 'import', '--org', '1.5'], /--org must be an integer/],
    ['import --org', ['import', 'assets', 'x.csv', '--org', '-1'], /--org must be an integer/],
    ['export --org', ['export', 'locations', '--org', '99999999999'], /--org must be an integer/],
    [
      '--since',
      ['activity', 'export', '--org', org, '--since', 'yesterday'],
      /--since must be an RFC 3339 timestamp/,
    ],
    ['session --org', ['session', 'token', '--org', 'x'], /--org must be an integer/],
    [
      'two-factor --org',
      ['two-factor', 'reset', '--org', 'x', '--email', 'a@b.c'],
      /--org must be an integer/,
    ],
    ['--priority', ['backup', '--out', 'x.tar.gz', '--priority', 'high'], /--priority must be low or normal/],
  ];

  it('a malformed option value is a usage error (exit 2) that changes nothing', async () => {
    const before = await counts();
    for (const [name, args, message] of malformed()) {
      const result = await cli(...args);
      expect(result.code, `${name}: ${result.stderr}`).toBe(2);
      expect(result.stderr, name).toMatch(/^error: /);
      expect(result.stderr, name).toMatch(message);
      expect(result.stdout, name).toBe('');
    }
    expect(await counts()).toEqual(before);
  });
});
