import type { Readable } from 'node:stream';

/** One line of an NDJSON file, without its line end. */
export interface NdjsonLine {
  /** The line as UTF-8 text (a CR before the LF removed), or null when it is longer than the bound. */
  text: string | null;
  /** Bytes of the line as read, its line end included. */
  bytes: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into lines at LF (CRLF taken as one line end), holding at most
 * `maxBytes` of a line: a longer one is skipped as it streams past and given as null, so
 * a file with one enormous line (a JSON array where NDJSON was expected, a binary file)
 * costs no more memory than any other. readline would hold the whole line, and past V8's
 * longest string fail the import. LF never occurs inside a multi-byte UTF-8 sequence, so
 * a line's bytes are decoded whole.
 */
export async function* ndjsonLines(input: Readable, maxBytes: number): AsyncGenerator<NdjsonLine> {
  let parts: Buffer[] = [];
  // Bytes of the current line so far, and whether it has passed the bound (its bytes dropped).
  let length = 0;
  let tooLong = false;
  const finish = (bytes: number): NdjsonLine => {
    let line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    const text = tooLong || line.length > maxBytes ? null : line.toString('utf8');
    parts = [];
    length = 0;
    tooLong = false;
    return { text, bytes };
  };
  for await (const chunk of input) {
    const buf: Buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (;;) {
      const lf = buf.indexOf(LF, start);
      const end = lf === -1 ? buf.length : lf;
      length += end - start;
      // One byte over the bound may be the CR of a CRLF.
      if (!tooLong && length > maxBytes + 1) {
        tooLong = true;
        parts = [];
      }
      if (!tooLong && end > start) parts.push(buf.subarray(start, end));
      if (lf === -1) break;
      yield finish(length + 1);
      start = lf + 1;
    }
  }
  if (length > 0) yield finish(length);
}
