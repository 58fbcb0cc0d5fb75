import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../src/db/migrate.js';
import type { RunningService } from '../../src/runtime.js';
import { buildFacts } from '../helpers/build-facts.js';
import { buildIfStale, childEnv, MAIN, run, runCli } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestService } from '../helpers/service.js';

function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString()),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('tagtrail CLI (compiled, against a real database)', () => {
  let database: TestDatabase;
  let dataDir: string;

  /** Runs `node dist/src/cli/main.js ...` against the test database. */
  const cli = (...args: string[]) => runCli(database.url, dataDir, args);
  /** Runs a command expected to succeed with --json and parses its one line of output. */
  const cliJson = async (...args: string[]) => {
    const result = await cli(...args, '--json');
    expect(result.stderr).toBe('');
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]!);
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tagtrail-cli-test-'));
    [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
  }, 120_000);
  afterAll(async () => {
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('--version names the version and the newest migration this build ships', async () => {
    const { version, schema } = await buildFacts();
    const result = await run(process.execPath, [MAIN, '--version'], process.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${version} (database schema ${schema})\n`);
  });

  it('migrate --json on a migrated database applies nothing', async () => {
    expect(await cliJson('migrate')).toEqual({ applied: [] });
  });

  it('org create --json prints the new organization', async () => {
    const org = await cliJson('org', 'create', '--name', 'CLI Org');
    expect(org).toEqual({ id: expect.any(Number), name: 'CLI Org', created_at: expect.any(String) });
    expect(Number.isInteger(org.id) && org.id >= 1).toBe(true);
    expect(new Date(org.created_at).toISOString()).toBe(org.created_at);
    const { rows } = await database.db.pool.query('SELECT name FROM organizations WHERE id = $1', [org.id]);
    expect(rows).toEqual([{ name: 'CLI Org' }]);
  });

  it('org create without --json prints key: value lines', async () => {
    const result = await cli('org', 'create', '--name', 'Plain Org');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^id: \d+\nname: Plain Org\ncreated_at: \S+\n$/);
  });

  it('org create refuses a blank name', async () => {
    const result = await cli('org', 'create', '--name', '   ');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/name must be at least 1 character/);
  });

  describe('key mint', () => {
    let orgId: number;
    beforeAll(async () => {
      orgId = (await cliJson('org', 'create', '--name', 'Key Org')).id;
    });

    it('mints a key with scopes and prints its id and token', async () => {
      const key = await cliJson(
        'key',
        'mint',
        '--org',
        String(orgId),
        '--scopes',
        'tracking:read,assets:read',
        '--name',
        'integration',
      );
      expect(key).toEqual({
        id: expect.stringMatching(UUID),
        org_id: orgId,
        name: 'integration',
        scopes: ['assets:read', 'tracking:read'],
        environment: 'production',
        expires_at: null,
        token: expect.any(String),
      });
      const { header, payload } = decodeJwt(key.token);
      expect(header.alg).toBe('EdDSA');
      expect(payload).toMatchObject({
        sub: key.id,
        org: orgId,
        scp: ['assets:read', 'tracking:read'],
        use: 'api_key',
        aud: 'tagtrail:production',
      });
      expect(payload.exp).toBeUndefined();
      const { rows } = await database.db.pool.query(
        'SELECT org_id, name, scopes, environment FROM api_keys WHERE id = $1',
        [key.id],
      );
      expect(rows).toEqual([
        {
          org_id: orgId,
          name: 'integration',
          scopes: ['assets:read', 'tracking:read'],
          environment: 'production',
        },
      ]);
    });

    it('accepts an empty scope list', async () => {
      const key = await cliJson('key', 'mint', '--org', String(orgId), '--scopes', '');
      expect(key.scopes).toEqual([]);
      expect(key.name).toBe('API key');
      expect(decodeJwt(key.token).payload.scp).toEqual([]);
    });

    it('--expires-in sets the expiry of the record and the token alike', async () => {
      const before = Math.floor(Date.now() / 1000);
      const key = await cliJson(
        'key',
        'mint',
        '--org',
        String(orgId),
        '--scopes',
        'assets:read',
        '--expires-in',
        '3600',
      );
      const after = Math.ceil(Date.now() / 1000);
      const expiresAt = new Date(key.expires_at).getTime() / 1000;
      expect(expiresAt).toBeGreaterThanOrEqual(before + 3600);
      expect(expiresAt).toBeLessThanOrEqual(after + 3600);
      expect(decodeJwt(key.token).payload.exp).toBe(expiresAt);
    });

    it('--env preview mints a key whose audience is the preview environment', async () => {
      const key = await cliJson(
        'key',
        'mint',
        '--org',
        String(orgId),
        '--scopes',
        'assets:read',
        '--env',
        'preview',
      );
      expect(key.environment).toBe('preview');
      const aud = decodeJwt(key.token).payload.aud;
      expect(typeof aud).toBe('string');
      expect(aud as string).toMatch(/preview$/);
    });

    it('refuses keys:admin', async () => {
      const result = await cli(
        'key',
        'mint',
        '--org',
        String(orgId),
        '--scopes',
        'assets:read,keys:admin',
        '--json',
      );
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/keys:admin/);
      const { rows } = await database.db.pool.query(
        "SELECT 1 FROM api_keys WHERE 'keys:admin' = ANY (scopes)",
      );
      expect(rows).toHaveLength(0);
    });

    it('refuses an unknown scope', async () => {
      const result = await cli('key', 'mint', '--org', String(orgId), '--scopes', 'assets:delete', '--json');
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/assets:delete/);
    });

    it('refuses an unknown organization, a bad --env and a bad --expires-in', async () => {
      const noOrg = await cli('key', 'mint', '--org', '2147483000', '--scopes', '', '--json');
      expect(noOrg.code).toBe(1);
      expect(noOrg.stderr).toMatch(/organization 2147483000 not found/);

      const badEnv = await cli('key', 'mint', '--org', String(orgId), '--scopes', '', '--env', 'staging');
      expect(badEnv.code).not.toBe(0);
      expect(badEnv.stderr).toMatch(/--env must be production or preview/);

      const badExpiry = await cli('key', 'mint', '--org', String(orgId), '--scopes', '', '--expires-in', '0');
      expect(badExpiry.code).not.toBe(0);
      expect(badExpiry.stderr).toMatch(/--expires-in must be a positive integer/);
    });

    it('needs --org and --scopes', async () => {
      const result = await cli('key', 'mint', '--org', String(orgId));
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--scopes/);
    });
  });

  describe('key revoke', () => {
    let orgId: number;
    beforeAll(async () => {
      orgId = (await cliJson('org', 'create', '--name', 'Revoke Org')).id;
    });

    it('revokes a key and prints its id and revocation time; revoking again keeps the time', async () => {
      const key = await cliJson('key', 'mint', '--org', String(orgId), '--scopes', '');
      const revoked = await cliJson('key', 'revoke', key.id);
      expect(revoked).toEqual({ id: key.id, revoked_at: expect.any(String) });
      expect(new Date(revoked.revoked_at).toISOString()).toBe(revoked.revoked_at);
      const again = await cliJson('key', 'revoke', key.id);
      expect(again).toEqual(revoked);
    });

    it('fails with exit 1 for an unknown key id', async () => {
      const result = await cli('key', 'revoke', '00000000-0000-4000-8000-000000000000', '--json');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/not found/);
    });

    it.each(['not-a-uuid', '-'.repeat(36), '00000000-0000-4000-8000-00000000000g'])(
      'refuses %s as the usage error it is (exit 2), before opening the database',
      async (arg) => {
        const result = await cli('key', 'revoke', '--', arg);
        expect(result.code).toBe(2);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(/key id must be a UUID/);
      },
    );
  });

  describe('while the server runs on the same database', () => {
    let service: RunningService;
    beforeAll(async () => {
      service = await startTestService({ DATABASE_URL: database.url, TAGTRAIL_DATA_DIR: dataDir });
    }, 60_000);
    afterAll(() => service?.stop());

    const me = (token: string) =>
      fetch(`${service.url}/api/v1/orgs/me`, { headers: { authorization: `Bearer ${token}` } });

    it('a key minted by the CLI authenticates at once; after key revoke the next request gets 401', async () => {
      const org = await cliJson('org', 'create', '--name', 'Live Org');
      const key = await cliJson('key', 'mint', '--org', String(org.id), '--scopes', 'assets:read');

      const ok = await me(key.token);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(await ok.json()).toEqual({
        data: { id: org.id, name: 'Live Org', scopes: ['assets:read'], api_key_id: key.id },
      });

      await cliJson('key', 'revoke', key.id);

      const revoked = await me(key.token);
      expect(revoked.status).toBe(401);
      const body = (await revoked.json()) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ type: 'unauthorized', detail: 'API key has been revoked' });
    });

    it('a preview key minted by the CLI does not authenticate against production', async () => {
      const org = await cliJson('org', 'create', '--name', 'Preview Org');
      const key = await cliJson('key', 'mint', '--org', String(org.id), '--scopes', '', '--env', 'preview');
      const res = await me(key.token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { detail: string } }).error.detail).toBe(
        'Invalid or expired token',
      );
    });
  });

  it('migrate --json on an empty database applies every migration; --check says what it would', async () => {
    const empty = await createTestDatabase({ migrate: false });
    try {
      // Not runCli: migrate at the log level an operator's run has, not silenced.
      const env = childEnv({ DATABASE_URL: empty.url, TAGTRAIL_DATA_DIR: dataDir });
      const versions = (await readdir(migrationsDir()))
        .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
        .sort()
        .map((f) => f.replace(/\.sql$/, ''));
      // Nothing applied yet: every version pending, exit 3, and --check changed nothing.
      const before = await run(process.execPath, [MAIN, 'migrate', '--check', '--json'], env);
      expect(before.code, before.stderr).toBe(3);
      expect(JSON.parse(before.stdout)).toEqual({ pending: versions, unknown: [] });
      const { rows } = await empty.db.pool.query(`SELECT to_regclass('schema_migrations') AS t`);
      expect(rows[0].t).toBeNull();

      const result = await run(process.execPath, [MAIN, 'migrate', '--json'], env);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ applied: versions });

      const after = await run(process.execPath, [MAIN, 'migrate', '--check', '--json'], env);
      expect(after.code, after.stderr).toBe(0);
      expect(JSON.parse(after.stdout)).toEqual({ pending: [], unknown: [] });

      // A newer build's migration on the database: --check and migrate both exit 1, naming it.
      await empty.db.pool.query(`INSERT INTO schema_migrations (version) VALUES ('9999_newer')`);
      const newer = await run(process.execPath, [MAIN, 'migrate', '--check', '--json'], env);
      expect(newer.code).toBe(1);
      expect(JSON.parse(newer.stdout)).toEqual({ pending: [], unknown: ['9999_newer'] });
      expect(newer.stderr).toContain('migrated by a newer tagtrail (9999_newer');
      const refused = await run(process.execPath, [MAIN, 'migrate'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('migrated by a newer tagtrail (9999_newer');
    } finally {
      await empty.drop();
    }
    // Five CLI processes, one applying every migration: over 30 s on a loaded 2-core machine.
  }, 120_000);

  it('migrate --check names the older builds still connected; migrate refuses until they are gone', async () => {
    const empty = await createTestDatabase({ migrate: false });
    const older = new pg.Client({ connectionString: empty.url, application_name: 'tagtrail@0001' });
    await older.connect();
    try {
      const env = childEnv({ DATABASE_URL: empty.url, TAGTRAIL_DATA_DIR: dataDir });
      const pid = (await older.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const check = await run(process.execPath, [MAIN, 'migrate', '--check', '--json'], env);
      expect(check.code, check.stderr).toBe(3);
      expect(JSON.parse(check.stdout)).toMatchObject({
        older_builds_connected: [`tagtrail@0001 (pid ${pid})`],
      });
      const refused = await run(process.execPath, [MAIN, 'migrate'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        '1 connection of an older tagtrail (tagtrail@0001) is open on this database',
      );
      const { rows } = await empty.db.pool.query(`SELECT to_regclass('schema_migrations') AS t`);
      expect(rows[0].t).toBeNull();
    } finally {
      await older.end();
      await empty.drop();
    }
  }, 60_000);
});
