import type { AssetListParams } from '../assets/schemas.js';
import type { AssetService } from '../assets/service.js';
import type { Caller } from '../caller.js';
import { BULK_WRITES } from '../db/app-connection.js';
import type { Database } from '../db/pool.js';
import { badRequest, conflict, validationError } from '../errors.js';
import type { LocationListInput, LocationService } from '../locations/service.js';
import { applyAssets, planAssets } from './assets-import.js';
import { COLUMNS, cellCountError, type Kind, readHeader, rowBody } from './columns.js';
import { type CsvRecord, RecordTooLarge, readCsv, unescapeFormula } from './csv.js';
import { assetLine, EXPORT_PAGE, exportCsv, locationLine } from './export.js';
import { recordImportEvents } from './import-events.js';
import { applyLocations, planLocations } from './locations-import.js';
import { countOutcomes, type ParsedRow, type ProgressFn, type RowResult } from './rows.js';

/** Rows per import; a larger file is refused before anything is checked. */
export const MAX_IMPORT_ROWS = 500_000;

export interface ImportOptions {
  /** Decide every row and report, but write nothing. */
  dryRun?: boolean;
  /** Write nothing unless every row is accepted (default: write the accepted rows). */
  allOrNothing?: boolean;
  onProgress?: ProgressFn;
}

export interface ImportResult {
  kind: Kind;
  dry_run: boolean;
  all_or_nothing: boolean;
  /** Whether the accepted rows were written (false for a dry run, or all-or-nothing with a refused row). */
  applied: boolean;
  rows: number;
  created: number;
  changed: number;
  unchanged: number;
  refused: number;
  /** Every data row, in file order. */
  results: RowResult[];
}

export type AssetExportFilters = Omit<AssetListParams, 'limit' | 'offset'>;
export type LocationExportFilters = Omit<LocationListInput, 'limit' | 'offset'>;

/**
 * Spreadsheet import and export of assets and locations (docs/import-export.md).
 *
 * An import reads the whole file first, then, in one transaction, locks the rows it
 * updates and what the API's writes of the same kind lock (the keyspace when the file can
 * take automatic keys, and for locations the keyspace and the tree), decides every row by
 * the API's rules and writes the accepted rows set-based. Refused rows are skipped and the others
 * are written together, atomically: a failure while writing (the database refusing a
 * row that changed under a concurrent request) rolls the whole import back.
 */
export class SpreadsheetService {
  constructor(
    private readonly db: Database,
    private readonly assets: AssetService,
    private readonly locations: LocationService,
  ) {}

  async import(
    caller: Caller,
    kind: Kind,
    source: AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer | Uint8Array | string>,
    options: ImportOptions = {},
  ): Promise<ImportResult> {
    const orgId = caller.orgId;
    const progress = options.onProgress ?? (() => undefined);
    const rows = await readRows(kind, source, progress);
    progress({ phase: 'checking', done: 0, total: rows.length });
    const run = async (dryRun: boolean) =>
      this.db.withOrg(caller, async (tx) => {
        const plan =
          kind === 'assets'
            ? await planAssets(tx, orgId, rows, !dryRun)
            : await planLocations(tx, orgId, rows, !dryRun);
        const counts = countOutcomes(plan.results);
        const write = !dryRun && !(options.allOrNothing && counts.refused > 0);
        if (write) {
          const total = plan.writes.length;
          let done = 0;
          progress({ phase: 'writing', done, total });
          const advance = (n: number) => {
            done += n;
            progress({ phase: 'writing', done, total });
          };
          try {
            await tx.query(BULK_WRITES);
            if (kind === 'assets')
              await applyAssets(tx, orgId, plan as Parameters<typeof applyAssets>[2], advance);
            else await applyLocations(tx, orgId, plan as Parameters<typeof applyLocations>[2], advance);
            await recordImportEvents(tx, orgId, kind, plan.writes);
          } catch (err) {
            const code = (err as { code?: string }).code;
            if (code === '23505' || code === '23514' || code === '23503') {
              throw conflict(
                'the data changed while the import was being written (a concurrent request took a key or a tag); nothing was imported, run it again',
              );
            }
            throw err;
          }
        }
        return { plan, counts, write };
      });
    const { plan, counts, write } = await run(options.dryRun ?? false);
    progress({ phase: 'done', done: rows.length, total: rows.length });
    return {
      kind,
      dry_run: options.dryRun ?? false,
      all_or_nothing: options.allOrNothing ?? false,
      applied: write,
      rows: rows.length,
      ...counts,
      results: plan.results,
    };
  }

  /**
   * The assets a list request with these filters would return, all pages, as CSV: read on
   * one snapshot (eachPageOnSnapshot), so every row live for the whole export is in it
   * exactly once, whatever is created or deleted meanwhile.
   */
  exportAssets(orgId: number, filters: AssetExportFilters): AsyncGenerator<string> {
    return exportCsv('assets', assetLine, (onPage) =>
      this.assets.listAll(orgId, filters, EXPORT_PAGE, onPage),
    );
  }

  /** As exportAssets, for the locations list. */
  exportLocations(orgId: number, filters: LocationExportFilters): AsyncGenerator<string> {
    return exportCsv('locations', locationLine, (onPage) =>
      this.locations.listAll(orgId, filters, EXPORT_PAGE, onPage),
    );
  }
}

/** The file's data rows as API bodies; a header the import cannot use refuses the file. */
async function readRows(
  kind: Kind,
  source: AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer | Uint8Array | string>,
  progress: ProgressFn,
): Promise<ParsedRow[]> {
  let columns: string[] | undefined;
  const rows: ParsedRow[] = [];
  const header = (record: CsvRecord) => {
    if (record.problem) throw badRequest(`the header row cannot be read: ${record.problem.message}`);
    // Only LF ends a record, so a file with CR-only line ends (old Mac) is one record whose
    // header cells hold the CRs: said as such, not as an unknown column named "name\rK1".
    if (record.fields!.some((f) => f.includes('\r'))) {
      throw badRequest(
        'the header row holds a bare CR: the file has CR-only line ends; save it with CRLF or LF line ends',
      );
    }
    const read = readHeader(kind, record.fields!);
    if ('errors' in read) throw validationError(read.errors);
    columns = read.columns;
  };
  // A row refused for its form still names its key when the key's cell could be read.
  const keyOf = (cells: string[] | undefined) => {
    const at = columns!.indexOf('external_key');
    const cell = at < 0 ? undefined : cells?.[at];
    return cell ? unescapeFormula(cell) : undefined;
  };
  try {
    for await (const record of readCsv(source)) {
      if (columns === undefined) {
        header(record);
        continue;
      }
      if (rows.length >= MAX_IMPORT_ROWS) {
        throw badRequest(`the file has more than ${MAX_IMPORT_ROWS} rows; split it into several imports`);
      }
      if (record.problem) {
        rows.push({
          row: record.row,
          body: {},
          key: keyOf(record.readable),
          errors: [{ field: '(row)', code: record.problem.code, message: record.problem.message }],
        });
      } else {
        const count = cellCountError(columns, record.fields!);
        if (count) rows.push({ row: record.row, body: {}, key: keyOf(record.fields), errors: [count] });
        else rows.push({ row: record.row, ...rowBody(columns, record.fields!) });
      }
      if (rows.length % 10_000 === 0) progress({ phase: 'reading', done: rows.length, total: 0 });
    }
  } catch (err) {
    if (!(err instanceof RecordTooLarge)) throw err;
    throw badRequest(
      `row ${err.row} is larger than ${err.max / (1024 * 1024)} MiB, or a quote in it is never closed (the rest of the file would be one cell); nothing was imported`,
    );
  }
  if (columns === undefined) {
    throw badRequest(`the file is empty; its first row must name the columns (${COLUMNS[kind].join(', ')})`);
  }
  return rows;
}
