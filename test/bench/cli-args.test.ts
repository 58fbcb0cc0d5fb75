import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, ROOT, run } from '../helpers/compiled.js';

// A benchmark's arguments: --help prints the usage, a mistake is named above it with exit 2,
// before anything is seeded or started (they ended in a stack trace, or in a run of NaN).
describe('benchmark arguments', () => {
  beforeAll(buildIfStale, 180_000);

  const bench = (file: string, ...args: string[]) => run(process.execPath, [join(ROOT, file), ...args]);

  // Every benchmark, so --help also links each one's imports of the compiled service: a
  // renamed export (bench:moves imported setCurrentLocations from where it no longer was)
  // failed only when somebody next ran that benchmark.
  const BENCHES: Array<[file: string, command: string]> = [
    ['bench/api.mjs', 'npm run bench:api'],
    ['bench/soak.mjs', 'npm run bench:soak'],
    ['bench/create-burst.mjs', 'npm run bench:create-burst'],
    ['bench/move-writes.mjs', 'npm run bench:moves'],
    ['bench/list-assets.mjs', 'npm run bench:list'],
    ['bench/location-tree.mjs', 'npm run bench:tree'],
    ['bench/restore-drill.mjs', 'node bench/restore-drill.mjs'],
    ['bench/heap-summary.mjs', 'node bench/heap-summary.mjs'],
    ['bench/profile-summary.mjs', 'node bench/profile-summary.mjs'],
    ['bench/object-spread.mjs', 'node bench/object-spread.mjs'],
    ['bench/db-wrapper.mjs', 'node bench/db-wrapper.mjs'],
    ['dist/bench/ingest.js', 'npm run bench:ingest'],
    ['dist/bench/webhooks.js', 'npm run bench:webhooks'],
    ['dist/bench/import.js', 'npm run bench:import'],
    ['dist/bench/digest-claims.js', 'npm run bench:digests'],
    ['dist/bench/late-reads.js', 'npm run bench:late-reads'],
  ];

  it.each(BENCHES)('%s --help prints its usage and exits 0', async (file, command) => {
    const r = await bench(file, '--help');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^(usage: )?${command.replace(/[.:]/g, '\\$&')}\\b`));
  });

  it('every benchmark that reads its arguments is in that list', async () => {
    const files = (await readdir(join(ROOT, 'bench'))).filter((f) => /\.(mjs|ts)$/.test(f));
    const entries = files.filter((f) => readFileSync(join(ROOT, 'bench', f), 'utf8').includes('benchArgs('));
    const listed = BENCHES.map(([file]) => file.replace(/^dist\/bench\/(.*)\.js$/, 'bench/$1.ts'));
    expect(entries.map((f) => `bench/${f}`).sort()).toEqual(listed.sort());
  });

  it('bench:api names its cases in the usage', async () => {
    const api = await bench('bench/api.mjs', '--help');
    expect(api.stdout).toContain(
      'get, me, list, listq, listfilter, descendants, locations, report, history, post, patch, mixed',
    );
  });

  it.each([
    ['bench/api.mjs', ['--bogus'], "Unknown option '--bogus'"],
    ['bench/api.mjs', ['--rounds', 'two'], '--rounds must be a positive whole number, not "two"'],
    ['bench/api.mjs', ['--only', 'get,gett'], '--only: no case "gett"'],
    ['bench/api.mjs', ['--duration', '0'], '--duration must be a positive whole number, not "0"'],
    ['dist/bench/ingest.js', ['--population', 'still'], '--population must be stationary or moving'],
    ['dist/bench/ingest.js', ['--reads', '7'], '--reads must be a multiple of --assets'],
    ['dist/bench/ingest.js', ['--warmup', '7'], '--warmup must be a multiple of --assets'],
    ['dist/bench/ingest.js', ['--warmup', 'two'], '--warmup must be a positive whole number, not "two"'],
    ['dist/bench/ingest.js', ['--rate', '0'], '--rate must be a positive whole number, not "0"'],
    ['dist/bench/ingest.js', ['--rate', '400', '--window', '4'], '--rate and --window do not go together'],
    ['bench/soak.mjs', ['--minutes'], "Option '--minutes <value>' argument missing"],
  ])('%s %j: the mistake above the usage, exit 2', async (file, args, message) => {
    const r = await bench(file, ...args);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toContain(message);
    expect(r.stderr).toMatch(/\n\n(usage: )?npm run bench:/);
    expect(r.stdout).toBe('');
  });
});
