import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Command } from 'commander';
import { cliCaller } from '../caller.js';
import { validationError } from '../errors.js';
import type { Kind } from '../spreadsheet/columns.js';
import { refusedReport } from '../spreadsheet/report.js';
import type { Progress } from '../spreadsheet/rows.js';
import { listQueryErrors } from '../spreadsheet/validate.js';
import { id } from './args.js';
import { EXIT_REFUSED, progressBar } from './progress.js';
import { withOrganization } from './with-services.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The spreadsheet import's progress as a bar: its phase and rows done of all. */
function rowsBar(stream: NodeJS.WriteStream) {
  const bar = progressBar(stream);
  return {
    update: (p: Progress) =>
      bar.update(
        p.total > 0 ? p.done / p.total : 0,
        `${p.phase.padEnd(8)} ${p.total > 0 ? `${p.done}/${p.total}` : `${p.done}`}`,
        p.done === p.total,
      ),
    finish: () => bar.finish(),
  };
}

async function writeLines(path: string | undefined, lines: Iterable<string> | AsyncIterable<string>) {
  const out = path ? createWriteStream(path) : process.stdout;
  for await (const line of lines) {
    if (!out.write(line)) await once(out, 'drain');
  }
  if (path) {
    (out as ReturnType<typeof createWriteStream>).end();
    await once(out, 'finish');
  }
}

interface ImportOpts {
  org: number;
  dryRun?: boolean;
  allOrNothing?: boolean;
  report?: string;
  json?: boolean;
}

interface ExportOpts {
  org: number;
  out?: string;
  externalKey?: string[];
  isActive?: string;
  includeDeleted?: boolean;
  q?: string;
  sort?: string;
  locationId?: string[];
  locationExternalKey?: string[];
  parentId?: string[];
  parentExternalKey?: string[];
}

/** The list query an export's options stand for, checked with the list endpoint's schema. */
function exportQuery(kind: Kind, o: ExportOpts): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  const bool = (v: string) => (v === 'true' ? true : v === 'false' ? false : v);
  const ints = (v: string[]) => v.map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  if (o.externalKey) query.external_key = o.externalKey;
  if (o.isActive !== undefined) query.is_active = bool(o.isActive);
  if (o.includeDeleted) query.include_deleted = true;
  if (o.q !== undefined) query.q = o.q;
  if (o.sort !== undefined) query.sort = o.sort;
  if (kind === 'assets') {
    if (o.locationId) query.location_id = ints(o.locationId);
    if (o.locationExternalKey) query.location_external_key = o.locationExternalKey;
  } else {
    if (o.parentId) query.parent_id = ints(o.parentId);
    if (o.parentExternalKey) query.parent_external_key = o.parentExternalKey;
  }
  const errors = listQueryErrors(kind, query);
  if (errors.length > 0) throw validationError(errors);
  delete query.limit;
  delete query.offset;
  return query;
}

/** `import assets|locations FILE` and `export assets|locations` (docs/import-export.md). */
export function registerSpreadsheetCommands(program: Command): void {
  const imp = program
    .command('import')
    .description('import assets or locations from a CSV file (upsert by external_key)');
  const exp = program.command('export').description('export assets or locations as CSV');
  for (const kind of ['assets', 'locations'] as const) {
    imp
      .command(`${kind} <file>`)
      .description(`import ${kind} from a CSV file; exits ${EXIT_REFUSED} when any row was refused`)
      .requiredOption('--org <id>', 'organization id', id('--org'))
      .option('--dry-run', 'check every row and report, but write nothing')
      .option('--all-or-nothing', 'write nothing unless every row is accepted')
      .option('--report <file>', 'where to write the refused rows as CSV (default: <file>.refused.csv)')
      .option('--json', 'print the summary as JSON')
      .action((file: string, opts: ImportOpts) =>
        withOrganization(opts.org, async (s) => {
          const bar = rowsBar(process.stderr);
          const result = await s.internal.spreadsheets
            .import(cliCaller(opts.org), kind, createReadStream(file), {
              dryRun: opts.dryRun,
              allOrNothing: opts.allOrNothing,
              onProgress: bar.update,
            })
            .finally(bar.finish);
          let report: string | null = null;
          if (result.refused > 0) {
            report = opts.report ?? `${file}.refused.csv`;
            await writeLines(report, refusedReport(result.results));
          }
          const summary = {
            kind,
            dry_run: result.dry_run,
            applied: result.applied,
            rows: result.rows,
            created: result.created,
            changed: result.changed,
            unchanged: result.unchanged,
            refused: result.refused,
            report,
          };
          if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
          else {
            for (const [k, v] of Object.entries(summary)) process.stdout.write(`${k}: ${v ?? '-'}\n`);
            for (const r of result.results.filter((x) => x.outcome === 'refused').slice(0, 10)) {
              const e = r.errors![0]!;
              process.stderr.write(`row ${r.row}: ${e.field} ${e.code}: ${e.message}\n`);
            }
          }
          if (result.refused > 0) process.exitCode = EXIT_REFUSED;
        }),
      );
    const cmd = exp
      .command(kind)
      .description(`export the ${kind} a list request with these filters returns, as CSV`)
      .requiredOption('--org <id>', 'organization id', id('--org'))
      .option('--out <file>', 'write to this file instead of standard output')
      .option('--external-key <key>', 'repeatable, equality match', collect)
      .option('--is-active <bool>', 'true or false')
      .option('--include-deleted', 'add soft-deleted rows')
      .option('--q <text>', 'case-insensitive substring of key, name, description or a tag value')
      .option('--sort <fields>', 'as the list endpoint: e.g. name,-created_at');
    if (kind === 'assets') {
      cmd
        .option('--location-id <id>', 'repeatable; current location', collect)
        .option('--location-external-key <key>', 'repeatable; current location', collect);
    } else {
      cmd
        .option('--parent-id <id>', 'repeatable', collect)
        .option('--parent-external-key <key>', 'repeatable', collect);
    }
    cmd.action((opts: ExportOpts) =>
      withOrganization(opts.org, async (s) => {
        const query = exportQuery(kind, opts);
        const lines =
          kind === 'assets'
            ? s.internal.spreadsheets.exportAssets(opts.org, query as never)
            : s.internal.spreadsheets.exportLocations(opts.org, query as never);
        await writeLines(opts.out, lines);
      }),
    );
  }
}
