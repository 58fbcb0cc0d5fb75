/**
 * CSV as spreadsheets write it (RFC 4180: comma-separated, fields optionally quoted with
 * `"`, `""` for a quote inside, CRLF or LF line ends), read incrementally from bytes.
 *
 * Records are split on the bytes before anything is decoded: `"`, `,`, CR and LF are
 * ASCII and never occur inside a multi-byte UTF-8 sequence, so the split is right even
 * when some bytes are not UTF-8. Each record is then decoded on its own, strictly, so a
 * record with bad bytes is refused alone (`invalid_encoding`) instead of being imported
 * with U+FFFD in place of what the spreadsheet held, and the rest of the file goes on.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const BOM = [0xef, 0xbb, 0xbf];

export type CsvProblem = 'invalid_encoding' | 'invalid_csv';

export interface CsvRecord {
  /** 1-based record number (the header is record 1), as a spreadsheet numbers its rows. */
  row: number;
  /** The fields, or the reason the record could not be read. */
  fields?: string[];
  problem?: { code: CsvProblem; message: string };
  /** With a problem: the leading fields that could still be read whole (for the row's key). */
  readable?: string[];
}

/**
 * Largest record a reader holds while looking for its end, in bytes: the web upload's
 * bound (MAX_UPLOAD_BYTES) for the whole file. A CLI import has no size limit, and a
 * quote that is never closed makes the rest of the file one record: without a bound it
 * would be held in memory whole.
 */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** A record past the reader's bound: the file is refused (the rest cannot be split). */
export class RecordTooLarge extends Error {
  constructor(
    readonly row: number,
    readonly max: number,
  ) {
    super(`row ${row} is larger than ${max} bytes`);
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** Splits one decoded record into fields; null when its quoting is malformed. */
export function splitRecord(text: string): string[] | null {
  const { fields, complete } = splitFields(text);
  return complete ? fields : null;
}

/**
 * The fields of a record, and whether it split cleanly; when not, `fields` holds those
 * read whole before the malformed one (the key a refused row is reported with).
 */
function splitFields(text: string): { fields: string[]; complete: boolean } {
  const fields: string[] = [];
  let i = 0;
  const n = text.length;
  const broken = { fields, complete: false };
  for (;;) {
    if (text.charCodeAt(i) === QUOTE) {
      let value = '';
      i++;
      for (;;) {
        const close = text.indexOf('"', i);
        if (close < 0) return broken; // unterminated quote
        value += text.slice(i, close);
        if (text.charCodeAt(close + 1) === QUOTE) {
          value += '"';
          i = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      if (i < n && text.charCodeAt(i) !== COMMA) return broken; // text after a closing quote
      fields.push(value);
      if (i === n) return { fields, complete: true };
      i++;
    } else {
      const comma = text.indexOf(',', i);
      const end = comma < 0 ? n : comma;
      const value = text.slice(i, end);
      if (value.includes('"')) return broken; // a quote inside an unquoted field
      fields.push(value);
      if (comma < 0) return { fields, complete: true };
      i = comma + 1;
    }
  }
}

/**
 * Incremental reader: push() byte chunks, get whole records back; end() returns the last
 * one. A leading UTF-8 byte order mark is skipped. Empty lines are skipped too (a
 * spreadsheet's trailing blank rows), but still counted in row numbers.
 */
export class CsvReader {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  /** Where the byte scanner is: 0 field start, 1 unquoted, 2 quoted, 3 a quote inside quotes. */
  private state = 0;
  private row = 0;
  private started = false;

  constructor(private readonly maxRecordBytes = MAX_RECORD_BYTES) {}

  push(chunk: Buffer): CsvRecord[] {
    let data = chunk;
    if (!this.started) {
      // Hold the first bytes until it is clear whether they are a byte order mark.
      const head = this.pendingLength > 0 ? Buffer.concat([...this.pending, data]) : data;
      if (head.length < BOM.length && head.every((b, i) => b === BOM[i])) {
        this.pending = [head];
        this.pendingLength = head.length;
        return [];
      }
      this.started = true;
      this.pending = [];
      this.pendingLength = 0;
      data = head;
      if (data[0] === BOM[0] && data[1] === BOM[1] && data[2] === BOM[2]) data = data.subarray(3);
    }
    const out: CsvRecord[] = [];
    let start = 0;
    for (let i = 0; i < data.length; i++) {
      const b = data[i];
      const state = this.state;
      if (state === 2) {
        if (b === QUOTE) this.state = 3;
        continue;
      }
      if (b === QUOTE && (state === 0 || state === 3)) {
        // Opens a quoted field, or (after a quote inside one) is the second of a doubled quote.
        this.state = 2;
        continue;
      }
      if (b === COMMA) {
        this.state = 0;
        continue;
      }
      if (b !== LF) {
        // A quote inside an unquoted field, or text after a closing quote, is plain data
        // here; splitRecord refuses the record.
        this.state = 1;
        continue;
      }
      {
        this.state = 0;
        const piece = data.subarray(start, i);
        const record = this.pendingLength > 0 ? Buffer.concat([...this.pending, piece]) : piece;
        this.pending = [];
        this.pendingLength = 0;
        this.emit(record, out);
        start = i + 1;
      }
    }
    if (start < data.length) {
      this.pending.push(data.subarray(start));
      this.pendingLength += data.length - start;
      if (this.pendingLength > this.maxRecordBytes)
        throw new RecordTooLarge(this.row + 1, this.maxRecordBytes);
    }
    return out;
  }

  end(): CsvRecord[] {
    if (!this.started && this.pendingLength > 0) {
      // Fewer bytes than a BOM in the whole input: treat them as data.
      this.started = true;
      const data = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingLength = 0;
      return [...this.push(data), ...this.end()];
    }
    const out: CsvRecord[] = [];
    if (this.pendingLength > 0) this.emit(Buffer.concat(this.pending), out);
    this.pending = [];
    this.pendingLength = 0;
    return out;
  }

  private emit(bytes: Buffer, out: CsvRecord[]): void {
    this.row++;
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === CR) end--;
    if (end === 0) return;
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(0, end));
    } catch {
      // The leading fields decoded leniently, up to the first that had bad bytes.
      const { fields } = splitFields(lenient.decode(bytes.subarray(0, end)));
      const bad = fields.findIndex((f) => f.includes('\uFFFD'));
      out.push({
        row: this.row,
        problem: {
          code: 'invalid_encoding',
          message: 'the row is not valid UTF-8; save the file as CSV UTF-8',
        },
        readable: bad < 0 ? fields : fields.slice(0, bad),
      });
      return;
    }
    const { fields, complete } = splitFields(text);
    if (!complete) {
      out.push({
        row: this.row,
        problem: {
          code: 'invalid_csv',
          message:
            'the row is not well-formed CSV (a quote that is not closed, or text after a closing quote)',
        },
        readable: fields,
      });
      return;
    }
    out.push({ row: this.row, fields });
  }
}

/** Reads every record of a byte stream. */
export async function* readCsv(
  source: AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer | Uint8Array | string>,
): AsyncGenerator<CsvRecord> {
  const reader = new CsvReader();
  for await (const chunk of source) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    yield* reader.push(bytes);
  }
  yield* reader.end();
}

/**
 * Formula injection (CSV injection): a spreadsheet program runs a cell that begins with
 * `=`, `+`, `-` or `@` (or a tab or CR before one) as a formula when the file is opened, so
 * an editor's asset name could run in the hands of whoever opens the export. Free-text
 * cells are written with a single quote in front (the spreadsheets' own "this is text"
 * mark) when they begin with one of those, after any quotes already there; an import takes
 * one leading quote off a cell of that form. The two are inverse on every string: a value
 * that really begins with `'=` is written `''=` and read back as `'=`.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;
const ESCAPED_FORMULA = /^'+[=+\-@\t\r]/;

/** A free-text cell as exported: `'` in front when a spreadsheet would run it (see above). */
export function escapeFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** A free-text cell as imported: escapeFormula undone. */
export function unescapeFormula(cell: string): string {
  return ESCAPED_FORMULA.test(cell) ? cell.slice(1) : cell;
}

/** One field as CSV: quoted when it holds a comma, quote, CR or LF, or leading/trailing spaces. */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One record with CRLF, as RFC 4180 and spreadsheets write it. */
export function csvLine(fields: string[]): string {
  // A record of one empty field is quoted: an empty line would be read as no record.
  if (fields.length === 1 && fields[0] === '') return '""\r\n';
  return `${fields.map(csvField).join(',')}\r\n`;
}
