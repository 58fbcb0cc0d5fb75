import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';

describe('generic-json', () => {
  const a = { tag: 'E2801160', antenna: 1, rssi: -60.5, time: '2024-06-01T12:00:00.123Z' };
  const b = { tag: 'e2-80-11-61', tag_type: 'rfid', time: '2024-06-01T14:00:00.123456+02:00' };
  const readA = {
    tagValue: 'E2801160',
    tagType: 'rfid',
    antenna: 1,
    rssi: -60.5,
    readerTime: Date.UTC(2024, 5, 1, 12, 0, 0, 123),
    readerId: null,
  };
  const readB = { ...readA, tagValue: 'E2801161', antenna: null, rssi: null };

  it('reads a batch, a single read and an array of reads', () => {
    expect(parsePayload('generic-json', JSON.stringify({ reader: 'r1', reads: [a, b] }))).toEqual({
      reads: [
        { ...readA, readerId: 'r1' },
        { ...readB, readerId: 'r1' },
      ],
      errors: [],
      failed: 0,
    });
    expect(parsePayload('generic-json', JSON.stringify({ reads: [a] }))).toEqual({
      reads: [readA],
      errors: [],
      failed: 0,
    });
    expect(parsePayload('generic-json', JSON.stringify(a))).toEqual({
      reads: [readA],
      errors: [],
      failed: 0,
    });
    expect(parsePayload('generic-json', JSON.stringify([a, b]))).toEqual({
      reads: [readA, readB],
      errors: [],
      failed: 0,
    });
  });

  it('normalizes per tag type: hex EPCs, BLE identifiers, barcodes verbatim', () => {
    const reads = [
      { tag: ' e2 80 ', tag_type: 'rfid' },
      { tag: 'ac:23:3f:a0:12:9b', tag_type: 'ble' },
      { tag: ' Box-0042/a ', tag_type: 'barcode' },
    ];
    expect(
      parsePayload('generic-json', JSON.stringify({ reads })).reads.map((r) => [r.tagType, r.tagValue]),
    ).toEqual([
      ['rfid', 'E280'],
      ['ble', 'AC233FA0129B'],
      ['barcode', 'Box-0042/a'],
    ]);
  });

  it('takes an object with a tag as a read even if it has a reads field', () => {
    expect(parsePayload('generic-json', JSON.stringify({ ...a, reads: 3 }))).toEqual({
      reads: [readA],
      errors: [],
      failed: 0,
    });
  });

  it('lets a read name its own reader', () => {
    const result = parsePayload(
      'generic-json',
      JSON.stringify({ reader: 'r1', reads: [a, { ...b, reader: 'r2' }] }),
    );
    expect(result.reads.map((r) => r.readerId)).toEqual(['r1', 'r2']);
  });

  it('treats null optional fields as absent', () => {
    const result = parsePayload(
      'generic-json',
      '{"reader":null,"reads":[{"tag":"E280","tag_type":null,"antenna":null,"rssi":null,"time":null}]}',
    );
    expect(result).toEqual({
      reads: [
        { tagValue: 'E280', tagType: 'rfid', antenna: null, rssi: null, readerTime: null, readerId: null },
      ],
      errors: [],
      failed: 0,
    });
  });

  it('reports malformed batches and reads without hiding the good ones', () => {
    const payload = JSON.stringify([
      { reader: 'r1', reads: 'E280' },
      { reader: ['r1'], reads: [a] },
      a,
      { tag: 'E280', tag_type: 'ble', antenna: '1' },
      { tag: 'bar\ncode', tag_type: 'barcode' },
      { tag: 'E'.repeat(256) },
      { tag: 42 },
      b,
    ]);
    const result = parsePayload('generic-json', payload);
    expect(result.reads).toEqual([
      readA,
      { tagValue: 'E280', tagType: 'ble', antenna: 1, rssi: null, readerTime: null, readerId: null },
      readB,
    ]);
    expect(result.errors).toEqual([
      'batch 1: reads must be an array, got "E280"',
      'batch 2: reader must be a non-empty string, got an array of 1',
      'read 3: tag contains control characters',
      'read 4: tag is longer than 255 characters',
      'read 5: tag must be a string, got 42',
    ]);
  });

  it('refuses top-level values that are not objects or arrays', () => {
    expect(parsePayload('generic-json', '"E280"').errors).toEqual(['read 1: read is not a JSON object']);
    expect(parsePayload('generic-json', 'E280').errors).toEqual([
      'line 1, offset 0: unexpected "E280" outside a JSON object or array',
    ]);
  });
});
