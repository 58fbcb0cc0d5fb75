import { describe, expect, it } from 'vitest';
import { listErrors, MAX_ERRORS } from './collector.js';
import { MAX_PAYLOAD_BYTES, parsePayload } from './index.js';

describe('parsePayload guards', () => {
  it('refuses a payload over 1 MiB with a single error', () => {
    const event = '{"eventType":"tagInventory","tagInventoryEvent":{"epcHex":"E280"}}\n';
    const big = event.repeat(Math.ceil((MAX_PAYLOAD_BYTES + 1) / event.length));
    for (const payload of [big, Buffer.from(big)]) {
      const result = parsePayload('impinj-r700', payload);
      expect(result.reads).toEqual([]);
      expect(result.errors).toHaveLength(1);
      expect(result.errors[0]).toMatch(/over the 1048576-byte limit/);
    }
  });

  it('accepts a payload of exactly 1 MiB', () => {
    const read = '{"tag":"E280"}';
    const payload = `[${read}${' '.repeat(MAX_PAYLOAD_BYTES - read.length - 2)}]`;
    expect(Buffer.byteLength(payload)).toBe(MAX_PAYLOAD_BYTES);
    expect(parsePayload('generic-json', payload).reads).toHaveLength(1);
  });

  it('counts bytes, not characters', () => {
    const payload = `{"tag":"E280","x":"${'é'.repeat(MAX_PAYLOAD_BYTES / 2)}"}`;
    expect(payload.length).toBeLessThan(MAX_PAYLOAD_BYTES);
    expect(parsePayload('generic-json', payload).errors[0]).toMatch(/over the 1048576-byte limit/);
  });

  it('strips a UTF-8 byte order mark', () => {
    const payload = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"tag":"e280"}')]);
    expect(parsePayload('generic-json', payload)).toEqual({
      reads: [
        { tagValue: 'E280', tagType: 'rfid', antenna: null, rssi: null, readerTime: null, readerId: null },
      ],
      errors: [],
      failed: 0,
    });
  });

  it('reports an unknown family and a payload of the wrong type instead of throwing', () => {
    expect(parsePayload('llrp' as never, '{}').errors).toEqual(['unknown reader family "llrp"']);
    expect(parsePayload('toString' as never, '{}').errors).toEqual(['unknown reader family "toString"']);
    expect(parsePayload('generic-json', 42 as never).errors).toEqual([
      'payload must be a Buffer or a string',
    ]);
  });

  it('caps the number of error messages, and counts every failed item', () => {
    const payload = `[${Array.from({ length: 500 }, () => '{"tag":"zz"}').join(',')}]`;
    const { errors, failed } = parsePayload('generic-json', payload);
    expect(errors).toHaveLength(MAX_ERRORS);
    expect(errors.at(-1)).toMatch(/^read 100: /);
    expect(failed).toBe(500);
    expect(listErrors(errors, failed).at(-1)).toBe('400 further errors not shown');
  });
});
