/** The CSV reader: quoting, byte order mark, line ends, and rows that cannot be read. */
import { describe, expect, it } from 'vitest';
import {
  CsvReader,
  type CsvRecord,
  csvLine,
  RecordTooLarge,
  splitRecord,
} from '../../src/spreadsheet/csv.js';

function readAll(bytes: Buffer, chunkSize = bytes.length || 1): CsvRecord[] {
  const reader = new CsvReader();
  const out: CsvRecord[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize)
    out.push(...reader.push(bytes.subarray(i, i + chunkSize)));
  out.push(...reader.end());
  return out;
}

const fields = (records: CsvRecord[]) => records.map((r) => r.fields);

describe('CSV reader', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks', () => {
    const text = 'a,b,c\r\n"x, y","say ""hi""","two\r\nlines"\r\n';
    expect(fields(readAll(Buffer.from(text)))).toEqual([
      ['a', 'b', 'c'],
      ['x, y', 'say "hi"', 'two\r\nlines'],
    ]);
  });

  it('gives the same records whatever the chunk boundaries', () => {
    const text = Buffer.from('\uFEFFk,name\r\n"Q,1","Ünïcödé ""q"""\nK2,\r\n\r\nK3,last');
    const whole = readAll(text);
    for (const size of [1, 2, 3, 5, 7]) expect(readAll(text, size)).toEqual(whole);
    expect(fields(whole)).toEqual([
      ['k', 'name'],
      ['Q,1', 'Ünïcödé "q"'],
      ['K2', ''],
      ['K3', 'last'],
    ]);
  });

  it('skips a UTF-8 byte order mark and numbers rows as a spreadsheet does, blank lines included', () => {
    const records = readAll(Buffer.from('\uFEFFa,b\n\n1,2\n'));
    expect(records).toEqual([
      { row: 1, fields: ['a', 'b'] },
      { row: 3, fields: ['1', '2'] },
    ]);
  });

  it('accepts LF, CRLF and a last line without a line end', () => {
    expect(fields(readAll(Buffer.from('a\nb\r\nc')))).toEqual([['a'], ['b'], ['c']]);
  });

  it('refuses a row with bytes that are not UTF-8 with invalid_encoding, and reads the next rows', () => {
    const bytes = Buffer.concat([
      Buffer.from('k,name\nA,'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('\nB,fine\n'),
    ]);
    const records = readAll(bytes);
    expect(records[1]).toMatchObject({ row: 2, problem: { code: 'invalid_encoding' } });
    expect(records[1]!.problem!.message).toMatch(/UTF-8/);
    expect(records[2]).toEqual({ row: 3, fields: ['B', 'fine'] });
  });

  it('refuses a Latin-1 file row by row instead of importing mojibake', () => {
    const latin1 = Buffer.from('k,name\nA,Caf\xe9\n', 'latin1');
    expect(readAll(latin1)[1]).toMatchObject({ problem: { code: 'invalid_encoding' } });
  });

  it('refuses malformed quoting with invalid_csv', () => {
    expect(splitRecord('a"b,c')).toBeNull();
    expect(splitRecord('"a"b,c')).toBeNull();
    expect(splitRecord('"open')).toBeNull();
    const records = readAll(Buffer.from('k,name\nA,x"y\nB,ok\n'));
    expect(records[1]).toMatchObject({ row: 2, problem: { code: 'invalid_csv' } });
    expect(records[2]).toEqual({ row: 3, fields: ['B', 'ok'] });
  });

  it('keeps empty fields and a trailing empty field', () => {
    expect(splitRecord(',,')).toEqual(['', '', '']);
    expect(splitRecord('a,')).toEqual(['a', '']);
    expect(splitRecord('""')).toEqual(['']);
  });

  it('writes fields that need it quoted, and reads them back', () => {
    const values = ['plain', 'a,b', 'say "x"', 'two\nlines', ' lead', 'trail ', ''];
    const line = csvLine(values);
    expect(line.endsWith('\r\n')).toBe(true);
    expect(fields(readAll(Buffer.from(line)))).toEqual([values]);
  });

  it('keeps the fields it could read of a row it refuses', () => {
    const records = readAll(Buffer.from('K1,"a"b,c\nK2,ok,"open\nK3,x\n'));
    expect(records.map((r) => [r.problem?.code, r.readable])).toEqual([
      ['invalid_csv', ['K1']],
      // The quote never closed takes the rest of the input into this row.
      ['invalid_csv', ['K2', 'ok']],
    ]);
    const enc = readAll(Buffer.from([0x4b, 0x33, 0x2c, 0xff, 0x0a, 0xff, 0x2c, 0x78, 0x0a]));
    expect(enc.map((r) => [r.problem?.code, r.readable])).toEqual([
      ['invalid_encoding', ['K3']],
      ['invalid_encoding', []],
    ]);
  });

  it('refuses a record past its bound instead of holding it in memory whole', () => {
    const reader = new CsvReader(1024);
    expect(reader.push(Buffer.from('k,name\nK1,"never closed'))).toHaveLength(1);
    expect(() => {
      for (let i = 0; i < 10; i++) reader.push(Buffer.alloc(200, 0x61));
    }).toThrow(RecordTooLarge);
  });
});
