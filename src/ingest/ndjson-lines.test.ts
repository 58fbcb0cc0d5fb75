import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ndjsonLines } from './ndjson-lines.js';

const linesOf = async (chunks: Array<string | Buffer>, maxBytes = 8) => {
  const out: Array<[string | null, number]> = [];
  for await (const l of ndjsonLines(Readable.from(chunks.map((c) => Buffer.from(c))), maxBytes)) {
    out.push([l.text, l.bytes]);
  }
  return out;
};

describe('ndjsonLines', () => {
  it('splits at LF and CRLF, across chunk boundaries, with the last line unterminated', async () => {
    expect(await linesOf(['ab\r', '\ncd\n', '\n', 'e', 'f'])).toEqual([
      ['ab', 4],
      ['cd', 3],
      ['', 1],
      ['ef', 2],
    ]);
    expect(await linesOf([])).toEqual([]);
    expect(await linesOf(['x\n'])).toEqual([['x', 2]]);
  });

  it('decodes a character whose bytes are split over two chunks', async () => {
    const e = Buffer.from('é\n');
    expect(await linesOf([e.subarray(0, 1), e.subarray(1)])).toEqual([['é', 3]]);
  });

  it('gives a line over the bound as null, whatever its chunks, and goes on after it', async () => {
    expect(await linesOf(['12345678\r\n', '123456789\n', '1234', '56789\r\n', 'ok'])).toEqual([
      ['12345678', 10],
      [null, 10],
      [null, 11],
      ['ok', 2],
    ]);
    expect(await linesOf(['x'.repeat(100)])).toEqual([[null, 100]]);
  });
});
