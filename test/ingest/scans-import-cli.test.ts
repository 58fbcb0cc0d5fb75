/**
 * `tagtrail scans import`, run in-process (the same commander program as
 * `tagtrail`) against the test database through DATABASE_URL.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRET_KEYS } from '../helpers/secrets.js';
import { tagtrail, tagtrailOn } from './cli-run.js';
import { ingestFixture } from './helpers.js';

let t: TestApp;
let dir: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  t = await buildTestApp();
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-import-'));
  process.env.DATABASE_URL = t.database.url;
  // The test app's key: it sealed the secrets in this database.
  process.env.TAGTRAIL_SECRET_KEYS = TEST_SECRET_KEYS;
  process.env.LOG_LEVEL = 'silent';
  delete process.env.MQTT_URL;
});
afterAll(async () => {
  process.env = savedEnv;
  await rm(dir, { recursive: true, force: true });
  await t?.close();
});

describe('tagtrail scans import', () => {
  it('applies 2,000 records in batches, counting invalid lines by number and unknown assets', async () => {
    const f = await ingestFixture(t);
    const pool = t.database.db.pool;
    const locations = [
      await f.location('IMP-DOCK'),
      await f.location('IMP-SHELF'),
      await f.location('IMP-GATE'),
    ];
    await pool.query(
      `INSERT INTO tags (org_id, tag_type, value, location_id) VALUES ($1, 'barcode', 'LOC-GATE-TAG', $2)`,
      [f.orgId, locations[2]],
    );
    const assets: number[] = [];
    const tagOf = (n: number) => `E2000000000000000001${String(n).padStart(4, '0')}`;
    for (let i = 0; i < 20; i++) assets.push(await f.asset(tagOf(i), `IMP-A${i}`));

    const base = Date.parse('2026-01-10T08:00:00Z');
    const lines: string[] = [];
    const invalidLines: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const n = i % 20;
      const at = new Date(base + i * 60_000).toISOString();
      const asset =
        i % 3 === 0
          ? { asset_id: assets[n] }
          : i % 3 === 1
            ? { asset_external_key: `IMP-A${n}` }
            : // the tag as a handheld may spell it: lower case, colon-separated
              { tag: tagOf(n).toLowerCase().match(/../g)!.join(':') };
      const location =
        i % 4 === 0
          ? { location_id: locations[0] }
          : i % 4 === 1
            ? { location_external_key: 'IMP-SHELF' }
            : i % 4 === 2
              ? { location_tag: 'LOC-GATE-TAG' }
              : { location_id: locations[1] };
      let line = JSON.stringify({ observed_at: at, ...asset, ...location });
      if (i % 100 === 7) line = line.slice(0, 20); // cut off
      if (i % 100 === 8) line = JSON.stringify({ ...asset, ...location }); // no observed_at
      if (i % 100 === 9) line = JSON.stringify({ observed_at: at, ...asset, ...location, extra: 1 });
      if (i % 100 === 7 || i % 100 === 8 || i % 100 === 9) invalidLines.push(i + 1);
      if (i === 1500)
        line = JSON.stringify({ observed_at: at, asset_external_key: 'NOBODY', location_id: locations[0] });
      if (i === 1501)
        line = JSON.stringify({ observed_at: at, asset_id: assets[0], location_external_key: 'NOWHERE' });
      lines.push(line);
    }
    invalidLines.push(1502);
    invalidLines.sort((a, b) => a - b);
    const file = join(dir, 'scans.ndjson');
    await writeFile(file, `${lines.join('\n')}\n\n`);

    const { stdout, stderr, code } = await tagtrail(
      'scans',
      'import',
      '--org',
      String(f.orgId),
      file,
      '--json',
    );
    // Lines were refused: a script must notice, though the valid ones are applied.
    expect(code).toBe(3);
    // Not a terminal: no progress bar in a log.
    expect(stderr).toBe('');
    const summary = JSON.parse(stdout);
    expect(summary.invalid).toBe(invalidLines.length);
    expect(summary).toMatchObject({ applied: 2000 - invalidLines.length - 1, unknown: 1, lines: 2001 });
    expect(summary.errors).toHaveLength(20);
    expect(summary.errors[0]).toBe('line 8: not valid JSON');
    expect(summary.errors[1]).toMatch(/^line 9: observed_at is required/);
    expect(summary.errors[2]).toMatch(/^line 10: unknown field extra/);
    expect(summary.errors.map((e: string) => Number(/^line (\d+):/.exec(e)?.[1]))).toEqual(
      invalidLines.slice(0, 20),
    );

    // Asset 0 is read on lines i = 0, 20, 40, ...: always at the dock (i % 4 = 0).
    const history = await f.history(assets[0]!);
    expect(history.length).toBeGreaterThan(0);
    expect(history.every((h) => h.location_id === locations[0])).toBe(true);
    // Asset 1 is read on lines i = 1, 21, 41, ...: always at the shelf (i % 4 = 1).
    const report = await f.report(assets[1]!);
    expect(report).toMatchObject([{ location_id: locations[1] }]);
    // The import is in the raw log, one row per batch.
    const raw = await pool.query(
      `SELECT count(*)::int AS n FROM raw_messages WHERE org_id = $1 AND source = 'import'`,
      [f.orgId],
    );
    expect(raw.rows[0].n).toBe(4);
  });

  it('exits 0 when no line was refused (unknown assets are not refusals) and draws a bar on a terminal', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location('BAR-DOCK');
    await f.asset('E20000000000000000020001', 'BAR-A1');
    const lines = Array.from({ length: 1200 }, (_, i) =>
      JSON.stringify({
        observed_at: new Date(Date.parse('2026-02-01T00:00:00Z') + i * 1000).toISOString(),
        asset_external_key: i === 5 ? 'BAR-NOBODY' : 'BAR-A1',
        location_id: dock,
      }),
    );
    const file = join(dir, 'bar.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const { stdout, stderr, code } = await tagtrailOn(
      { tty: true },
      'scans',
      'import',
      '--org',
      String(f.orgId),
      file,
    );
    expect(code).toBe(0);
    expect(stdout).toContain('applied: 1199\nunknown: 1\ninvalid: 0\nlines: 1200\n');
    // Drawn in place on standard error: the bar with the counts, cleared at the end.
    const ESC = String.fromCharCode(27);
    expect(stderr.startsWith('\r[')).toBe(true);
    expect(stderr.split(`${ESC}[K`)[0]).toMatch(
      /^\r\[#*\.*\] \d+ lines: \d+ applied, \d unknown, 0 invalid$/,
    );
    expect(stderr.endsWith(`\r${ESC}[K`)).toBe(true);
    expect(stdout).not.toContain('\r');
  });

  it('moves the bar through a run of refused lines too, which store no batch', async () => {
    const f = await ingestFixture(t);
    const file = join(dir, 'refused-run.ndjson');
    await writeFile(file, 'not json\n'.repeat(1200));
    const { stderr, code } = await tagtrailOn(
      { tty: true },
      'scans',
      'import',
      '--org',
      String(f.orgId),
      file,
    );
    expect(code).toBe(3);
    // The first drawing is never held back: it comes after the first 500 lines, not at the end.
    const ESC = String.fromCharCode(27);
    expect(stderr.split(`${ESC}[K`)[0]).toMatch(/^\r\[#*\.*\] 500 lines: 0 applied, 0 unknown, 500 invalid$/);
  });

  it('refuses a line naming no location even when its asset is unknown too', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location('LOC-DOCK');
    const at = '2026-03-01T00:00:00Z';
    const lines = [
      { observed_at: at, asset_external_key: 'LOC-NOBODY', location_external_key: 'LOC-NOWHERE' },
      { observed_at: at, asset_external_key: 'LOC-NOBODY', location_id: 2147483000 },
      { observed_at: at, asset_external_key: 'LOC-NOBODY', location_id: dock },
    ].map((r) => JSON.stringify(r));
    const file = join(dir, 'nowhere.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const { stdout, code } = await tagtrail('scans', 'import', '--org', String(f.orgId), file, '--json');
    expect(code).toBe(3);
    expect(JSON.parse(stdout)).toEqual({
      applied: 0,
      unknown: 1,
      invalid: 2,
      lines: 3,
      errors: ['line 1: location not found', 'line 2: location not found'],
    });
  });

  it('lists the first refused lines in line order, a missing location before later bad lines', async () => {
    const f = await ingestFixture(t);
    await f.asset('E20000000000000000030001', 'ORD-A1');
    const first = {
      observed_at: '2026-03-01T00:00:00Z',
      asset_external_key: 'ORD-A1',
      location_id: 2147483000,
    };
    const lines = [JSON.stringify(first), ...Array.from({ length: 24 }, () => 'not json')];
    const file = join(dir, 'order.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const { stdout, code } = await tagtrail('scans', 'import', '--org', String(f.orgId), file, '--json');
    expect(code).toBe(3);
    const summary = JSON.parse(stdout);
    expect(summary.invalid).toBe(25);
    expect(summary.errors).toEqual([
      'line 1: location not found',
      ...Array.from({ length: 19 }, (_, i) => `line ${i + 2}: not valid JSON`),
    ]);
  });

  it('takes a file saved with a byte order mark and CRLF line ends (Windows editors, spreadsheet exports)', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location('BOM-DOCK');
    await f.asset('E20000000000000000040001', 'BOM-A1');
    const lines = [0, 1].map((i) =>
      JSON.stringify({
        observed_at: `2026-03-02T00:00:0${i}Z`,
        asset_external_key: 'BOM-A1',
        location_id: dock,
      }),
    );
    const file = join(dir, 'bom.ndjson');
    await writeFile(file, `\uFEFF${lines.join('\r\n')}\r\n`);
    const { stdout, code } = await tagtrail('scans', 'import', '--org', String(f.orgId), file, '--json');
    expect(JSON.parse(stdout)).toEqual({ applied: 2, unknown: 0, invalid: 0, lines: 2, errors: [] });
    expect(code).toBe(0);
  });

  it('refuses a line over 1 MiB without holding it, and applies the lines around it', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location('HUGE-DOCK');
    await f.asset('E20000000000000000050001', 'HUGE-A1');
    const record = (i: number, extra = {}) =>
      JSON.stringify({
        observed_at: `2026-03-03T00:00:0${i}Z`,
        asset_external_key: 'HUGE-A1',
        location_id: dock,
        ...extra,
      });
    const file = join(dir, 'huge.ndjson');
    await writeFile(
      file,
      `${record(0)}\n${record(1, { note: 'x'.repeat(2 * 1024 * 1024) })}\n${record(2)}\n`,
    );
    const { stdout, code } = await tagtrail('scans', 'import', '--org', String(f.orgId), file, '--json');
    expect(JSON.parse(stdout)).toEqual({
      applied: 2,
      unknown: 0,
      invalid: 1,
      lines: 3,
      errors: ['line 2: line is longer than 1048576 bytes'],
    });
    expect(code).toBe(3);
  });

  it('refuses an unknown organization and a missing file', async () => {
    await expect(tagtrail('scans', 'import', '--org', '2147483000', join(dir, 'none'))).rejects.toThrow(
      /organization 2147483000 not found/,
    );
    const f = await ingestFixture(t);
    await expect(tagtrail('scans', 'import', '--org', String(f.orgId), join(dir, 'none'))).rejects.toThrow(
      /ENOENT/,
    );
  });
});
