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
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Splits one decoded record into fields; null when its quoting is malformed. */
export function splitRecord(text: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    if (text.charCodeAt(i) === QUOTE) {
      let value = '';
      i++;
      for (;;) {
        const close = text.indexOf('"', i);
        if (close < 0) return null; // unterminated quote
        value += text.slice(i, close);
        if (text.charCodeAt(close + 1) === QUOTE) {
          value += '"';
          i = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      fields.push(value);
      if (i === n) return fields;
      if (text.charCodeAt(i) !== COMMA) return null; // text after a closing quote
      i++;
    } else {
      const comma = text.indexOf(',', i);
      const end = comma < 0 ? n : comma;
      const value = text.slice(i, end);
      if (value.includes('"')) return null; // a quote inside an unquoted field
      fields.push(value);
      if (comma < 0) return fields;
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

  /** Bytes received but not yet returned as a record (a guard against one endless record). */
  get buffered(): number {
    return this.pendingLength;
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
      out.push({
        row: this.row,
        problem: {
          code: 'invalid_encoding',
          message: 'the row is not valid UTF-8; save the file as CSV UTF-8',
        },
      });
      return;
    }
    const fields = splitRecord(text);
    if (fields === null) {
      out.push({
        row: this.row,
        problem: {
          code: 'invalid_csv',
          message:
            'the row is not well-formed CSV (a quote that is not closed, or text after a closing quote)',
        },
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
