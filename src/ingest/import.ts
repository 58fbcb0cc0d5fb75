import type { Readable } from 'node:stream';
import { ndjsonLines } from './ndjson-lines.js';
import { parseScanRecord, type ScanRecord } from './records.js';
import type { IngestService } from './service.js';

export interface ImportProgress {
  /** Lines read so far (blank lines included). */
  lines: number;
  /** Bytes of those lines as read, line ends included. */
  bytes: number;
  applied: number;
  unknown: number;
  invalid: number;
}

export interface ImportSummary extends ImportProgress {
  /** The first few problems, each naming its line. */
  errors: string[];
}

export interface ImportOptions {
  /** Records per transaction (and per raw log row). Default 500. */
  batchSize?: number;
  /** How many problems the summary lists. Default 20. */
  maxErrors?: number;
  /** Longest line taken, in bytes without its line end; a longer one is refused. Default 1 MiB. */
  maxLineBytes?: number;
  /**
   * Called after every batch, after every `batchSize` lines that stored no batch (a run of
   * refused lines), and once more at the end.
   */
  onBatch?: (progress: ImportProgress) => void;
}

/** Longest line an import takes: a scan record is a few hundred bytes. */
export const MAX_LINE_BYTES = 1024 * 1024;

interface Pending {
  record: ScanRecord;
  line: number;
  text: string;
}

/**
 * Applies NDJSON scan records (`{"observed_at", "asset_id"|"asset_external_key"|"tag",
 * "location_id"|"location_external_key"|"location_tag"}` per line) read from `input`,
 * in batches of one transaction each, and resolves once every record is applied. A line
 * that is not a valid record is counted with its line number and skipped; it never stops
 * the import. `unknown` counts records whose asset matches nothing (never created).
 */
export async function importScanRecords(
  ingest: Pick<IngestService, 'records'>,
  orgId: number,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const batchSize = options.batchSize ?? 500;
  const maxErrors = options.maxErrors ?? 20;
  const summary: ImportSummary = { lines: 0, bytes: 0, applied: 0, unknown: 0, invalid: 0, errors: [] };
  // The lowest-numbered problems, in line order: a line refused when its batch is stored
  // (a location not found) is known only after the later lines of the batch that failed to
  // parse, and must not be pushed out of the list by them.
  const first: Array<{ line: number; reason: string }> = [];
  const problem = (line: number, reason: string) => {
    summary.invalid++;
    if (maxErrors <= 0) return;
    if (first.length === maxErrors && line > first[first.length - 1]!.line) return;
    const at = first.findIndex((p) => p.line > line);
    first.splice(at === -1 ? first.length : at, 0, { line, reason });
    if (first.length > maxErrors) first.pop();
    summary.errors = first.map((p) => `line ${p.line}: ${p.reason}`);
  };
  let batch: Pending[] = [];
  // Lines read when progress was last reported: a long run of refused lines stores no batch,
  // and the bar would stand still through it.
  let reportedAt = 0;

  const flush = async () => {
    if (batch.length === 0) return;
    const current = batch;
    batch = [];
    const outcome = await ingest.records(
      orgId,
      current.map((p) => p.record),
      'import',
      current.map((p) => p.text).join('\n'),
    );
    summary.applied += outcome.good;
    summary.unknown += outcome.unknown;
    for (const { index, reason } of outcome.rejected ?? []) problem(current[index]!.line, reason);
    reportedAt = summary.lines;
    options.onBatch?.(progressOf(summary));
  };

  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  for await (const { text: read, bytes } of ndjsonLines(input, maxLineBytes)) {
    if (summary.lines - reportedAt >= batchSize) {
      reportedAt = summary.lines;
      options.onBatch?.(progressOf(summary));
    }
    const line = ++summary.lines;
    summary.bytes += bytes;
    if (read === null) {
      problem(line, `line is longer than ${maxLineBytes} bytes`);
      continue;
    }
    // Windows editors and spreadsheet exports start UTF-8 files with a byte order mark.
    const text = line === 1 && read.charCodeAt(0) === 0xfeff ? read.slice(1) : read;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      problem(line, 'not valid JSON');
      continue;
    }
    const record = parseScanRecord(value);
    if (typeof record === 'string') {
      problem(line, record);
      continue;
    }
    batch.push({ record, line, text });
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  options.onBatch?.(progressOf(summary));
  return summary;
}

const progressOf = ({ lines, bytes, applied, unknown, invalid }: ImportSummary): ImportProgress => ({
  lines,
  bytes,
  applied,
  unknown,
  invalid,
});
