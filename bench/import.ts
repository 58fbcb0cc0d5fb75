/**
 * Spreadsheet import benchmark: rows per second of `tagtrail import` (the service behind
 * the CLI and the web app, src/spreadsheet/) for a CSV of assets and one of locations,
 * against a baseline in the same run: PostgreSQL's own COPY of the same rows into a table
 * of the same columns without indexes or rules, the fastest way in there is.
 *
 *   npm run bench:import [-- --rows 100000 --json]
 *
 * Cases, each on the same fresh organization of a fresh database:
 *   assets create   every row new (tags on each, a third without a key: auto keys)
 *   assets update   the same file with every name changed
 *   assets same     the same file again: every row unchanged, nothing written
 *   locations       a tree (each row's parent is another row of the file, listed after it)
 * The embedded PostgreSQL runs in a temporary directory, or TEST_DATABASE_URL's server.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { AssetService } from '../src/assets/service.js';
import { cliCaller } from '../src/caller.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabase } from '../src/db/pool.js';
import { LocationService } from '../src/locations/service.js';
import type { Kind } from '../src/spreadsheet/columns.js';
import { csvLine } from '../src/spreadsheet/csv.js';
import { SpreadsheetService } from '../src/spreadsheet/service.js';
import { benchArgs, positiveInteger } from './cli-args.js';
import { adminQuery, benchPostgres } from './harness.js';

const USAGE = `npm run bench:import [-- options]   (docs/import-export.md)
  --rows N   rows of each file (100000)
  --json     the results as JSON on standard output
env: TEST_DATABASE_URL (a PostgreSQL server instead of the embedded one)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    rows: { type: 'string', default: '100000' },
    json: { type: 'boolean', default: false },
  },
});
const ROWS = positiveInteger('rows', args.rows, USAGE);

const log = (line: string) => {
  if (!args.json) process.stderr.write(`${line}\n`);
};

const pad = (n: number) => String(n).padStart(7, '0');

function assetsCsv(suffix: string): Buffer {
  const lines = [
    csvLine([
      'external_key',
      'name',
      'description',
      'is_active',
      'metadata',
      'tags',
      'valid_from',
      'valid_to',
    ]),
  ];
  for (let i = 0; i < ROWS; i++) {
    lines.push(
      csvLine([
        i % 3 === 2 ? '' : `A-${pad(i)}`,
        `Asset ${i}${suffix}`,
        i % 2 === 0 ? `Pump, hall ${i % 50}` : '',
        i % 10 === 0 ? 'false' : 'true',
        i % 4 === 0 ? `{"serial":"S${i}","rev":${i % 7}}` : '',
        `rfid:E2801170${pad(i)};barcode:B${pad(i)}`,
        '2026-01-01T00:00:00.000Z',
        '',
      ]),
    );
  }
  return Buffer.from(lines.join(''));
}

/** A tree of ten roots; row i's parent is row 10 + ... listed after it (children first). */
function locationsCsv(): Buffer {
  const lines = [csvLine(['external_key', 'name', 'parent_external_key', 'tags'])];
  for (let i = ROWS - 1; i >= 0; i--) {
    const parent = i < 10 ? '' : `L-${pad(Math.floor(i / 10))}`;
    lines.push(csvLine([`L-${pad(i)}`, `Location ${i}`, parent, `barcode:LOC${pad(i)}`]));
  }
  return Buffer.from(lines.join(''));
}

/** Seconds to COPY the file's rows (header skipped) into an unindexed table of its columns. */
async function copyBaseline(url: string, kind: Kind, csv: Buffer): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = `copy_${kind}_${randomBytes(3).toString('hex')}`;
    const columns =
      kind === 'assets'
        ? 'external_key text, name text, description text, is_active boolean, metadata jsonb, tags text, valid_from timestamptz, valid_to timestamptz'
        : 'external_key text, name text, parent_external_key text, tags text';
    await client.query(`CREATE TABLE ${table} (${columns})`);
    const started = performance.now();
    await pipeline(
      Readable.from([csv]),
      client.query(copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`)),
    );
    const seconds = (performance.now() - started) / 1000;
    await client.query(`DROP TABLE ${table}`);
    return seconds;
  } finally {
    await client.end();
  }
}

interface Case {
  case: string;
  rows: number;
  seconds: number;
  rows_per_second: number;
  copy_rows_per_second: number;
  ratio: number;
  outcome: string;
}

async function main() {
  const dbServer = await benchPostgres();
  const name = `tagtrail_bench_import_${randomBytes(4).toString('hex')}`;
  await adminQuery(dbServer.adminUrl, `CREATE DATABASE ${name}`);
  const url = dbServer.urlFor(name);
  const db = createDatabase(url, { max: 2 });
  const results: Case[] = [];
  try {
    await migrate(db.pool);
    const org = (
      await db.pool.query<{ id: number }>(`INSERT INTO organizations (name) VALUES ('bench') RETURNING id`)
    ).rows[0]!.id;
    const sheets = new SpreadsheetService(db, new AssetService(db), new LocationService(db));
    const measure = async (label: string, kind: Kind, csv: Buffer) => {
      const copySeconds = await copyBaseline(url, kind, csv);
      const started = performance.now();
      const r = await sheets.import(cliCaller(org), kind, [csv]);
      const seconds = (performance.now() - started) / 1000;
      if (r.refused > 0)
        throw new Error(
          `${label}: ${r.refused} rows refused: ${JSON.stringify(r.results.find((x) => x.errors))}`,
        );
      const c: Case = {
        case: label,
        rows: r.rows,
        seconds: Number(seconds.toFixed(2)),
        rows_per_second: Math.round(r.rows / seconds),
        copy_rows_per_second: Math.round(r.rows / copySeconds),
        ratio: Number((copySeconds / seconds).toFixed(3)),
        outcome: `created ${r.created}, changed ${r.changed}, unchanged ${r.unchanged}`,
      };
      results.push(c);
      log(
        `${label.padEnd(16)} ${c.rows} rows in ${c.seconds} s: ${c.rows_per_second} rows/s; COPY ${c.copy_rows_per_second} rows/s; ratio ${(c.ratio * 100).toFixed(1)}% of COPY (${c.outcome})`,
      );
    };
    log(
      `import benchmark: ${ROWS} rows per case, ${cpus().length} cores, ${process.env.TEST_DATABASE_URL ? 'PostgreSQL at TEST_DATABASE_URL' : 'embedded PostgreSQL'}`,
    );
    const created = assetsCsv('');
    await measure('assets create', 'assets', created);
    // Rows without a key were created with auto keys; the update and no-op files name them.
    const withKeys = async (suffix: string) => {
      const text = assetsCsv(suffix).toString().split('\r\n');
      const { rows } = await db.pool.query<{ external_key: string; name: string }>(
        `SELECT external_key, name FROM assets WHERE org_id = $1 AND external_key LIKE 'ASSET-%' ORDER BY id`,
        [org],
      );
      let next = 0;
      for (let i = 1; i < text.length; i++)
        if (text[i]!.startsWith(',')) text[i] = `${rows[next++]!.external_key}${text[i]}`;
      return Buffer.from(text.join('\r\n'));
    };
    await measure('assets update', 'assets', await withKeys(' v2'));
    await measure('assets same', 'assets', await withKeys(' v2'));
    await measure('locations', 'locations', locationsCsv());
  } finally {
    await db.close();
    await adminQuery(dbServer.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dbServer.stop();
  }
  if (args.json) process.stdout.write(`${JSON.stringify({ rows: ROWS, cores: cpus().length, results })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
