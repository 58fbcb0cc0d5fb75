/**
 * `tagtrail import` and `tagtrail export`, compiled and run as a process against the test
 * database: exit status, the refused-rows report file, and export filters.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, runCli } from '../helpers/compiled.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('tagtrail import / export', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let dir: string;
  let org: number;
  const cli = (...args: string[]) => runCli(database.url, dir, args);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-sheet-cli-'));
    [database] = await Promise.all([createTestDatabase(), buildIfStale()]);
    const created = await cli('org', 'create', '--name', 'Sheets', '--json');
    org = JSON.parse(created.stdout).id;
  }, 180_000);
  afterAll(async () => {
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('imports, exits 0 when every row is accepted, and a dry run writes nothing', async () => {
    const file = join(dir, 'sites.csv');
    await writeFile(file, 'external_key,name,parent_external_key\nROOM-1,Room,SITE-1\nSITE-1,Site,\n');
    const dry = await cli('import', 'locations', file, '--org', String(org), '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, applied: false, created: 2, refused: 0 });
    const none = await database.db.pool.query('SELECT count(*)::int AS n FROM locations');
    expect(none.rows[0].n).toBe(0);

    const real = await cli('import', 'locations', file, '--org', String(org), '--json');
    expect(real.code, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ applied: true, created: 2, report: null });
  });

  it('exits 3 when a row is refused and writes the refused rows with their codes to the report', async () => {
    const file = join(dir, 'assets.csv');
    const report = join(dir, 'refused.csv');
    await writeFile(file, 'external_key,name,tags\nA-1,Pump,rfid:T1\nA-2,,\nA-3,Valve,nfc:T3\n');
    const result = await cli('import', 'assets', file, '--org', String(org), '--report', report);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/created: 1\n/);
    expect(result.stderr).toMatch(/row 3: name required/);
    const lines = (await readFile(report, 'utf8')).trim().split('\r\n');
    expect(lines[0]).toBe('row,external_key,error_type,field,code,message');
    expect(lines[1]).toMatch(/^3,A-2,validation_error,name,required,/);
    expect(lines[2]).toMatch(/^4,A-3,validation_error,tags\[0\]\.tag_type,invalid_value,/);
  });

  it('exits 1 with the reason when the file cannot be imported at all', async () => {
    const file = join(dir, 'bad-header.csv');
    await writeFile(file, 'key,name\nA,B\n');
    const result = await cli('import', 'assets', file, '--org', String(org));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/key is not a known column/);
  });

  it('exports with the list filters and refuses filters the list endpoint refuses', async () => {
    const all = await cli('export', 'locations', '--org', String(org));
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.split('\r\n')[0]).toBe(
      'external_key,name,description,is_active,parent_external_key,tags,valid_from,valid_to',
    );
    const children = await cli(
      'export',
      'locations',
      '--org',
      String(org),
      '--parent-external-key',
      'SITE-1',
    );
    expect(children.stdout.trim().split('\r\n')).toHaveLength(2);
    expect(children.stdout).toContain('ROOM-1,Room,');
    const out = join(dir, 'export.csv');
    const toFile = await cli('export', 'assets', '--org', String(org), '--q', 'pump', '--out', out);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toContain('A-1,Pump,,true,{},rfid:T1,');
    const bad = await cli('export', 'assets', '--org', String(org), '--external-key', 'not a key');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/external_key/);
  });
});
