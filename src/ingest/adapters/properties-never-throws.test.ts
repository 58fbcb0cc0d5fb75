import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';
import { MAX_TAG_LENGTH } from './tag-values.js';
import { type AdapterResult, READER_FAMILIES, type ReaderFamily } from './types.js';

// Totality: whatever arrives, parsePayload returns well-formed reads and errors.

function expectWellFormed(result: AdapterResult): void {
  expect(Array.isArray(result.reads)).toBe(true);
  expect(Array.isArray(result.errors)).toBe(true);
  for (const message of result.errors) expect(typeof message).toBe('string');
  for (const read of result.reads) {
    expect(typeof read.tagValue).toBe('string');
    expect(read.tagValue.length).toBeGreaterThan(0);
    expect(read.tagValue.length).toBeLessThanOrEqual(MAX_TAG_LENGTH);
    expect(['rfid', 'ble', 'barcode']).toContain(read.tagType);
    if (read.tagType === 'rfid') expect(read.tagValue).toMatch(/^[0-9A-F]+$/);
    if (read.antenna !== null) expect(Number.isInteger(read.antenna) && read.antenna >= 0).toBe(true);
    if (read.rssi !== null) expect(Number.isFinite(read.rssi)).toBe(true);
    if (read.readerTime !== null) expect(Number.isSafeInteger(read.readerTime)).toBe(true);
    if (read.readerId !== null && read.readerId !== undefined)
      expect(read.readerId.length).toBeGreaterThan(0);
  }
}

/** Objects shaped like each family's payload whose fields are sometimes right and sometimes anything. */
const maybe = <T>(valid: fc.Arbitrary<T>) => fc.oneof(valid, fc.jsonValue(), fc.constant(undefined));
const hexish = fc.oneof(fc.stringMatching(/^[0-9a-fA-F]{1,40}$/), fc.string());
const timeish = fc.oneof(fc.constant('2024-06-01T12:00:00.123456789Z'), fc.string(), fc.integer());
const shaped: Record<ReaderFamily, fc.Arbitrary<unknown>> = {
  'impinj-r700': fc.record({
    timestamp: maybe(timeish),
    hostname: maybe(fc.string()),
    eventType: maybe(fc.constantFrom('tagInventory', 'inventoryStatus')),
    tagInventoryEvent: maybe(
      fc.record({
        epc: maybe(fc.base64String()),
        epcHex: maybe(hexish),
        antennaPort: maybe(fc.integer()),
        peakRssiCdbm: maybe(fc.integer()),
        lastSeenTime: maybe(timeish),
      }),
    ),
  }),
  'zebra-fx': fc.record({
    type: maybe(fc.constantFrom('SIMPLE', 'heartbeat')),
    timestamp: maybe(timeish),
    data: maybe(
      fc.record({
        idHex: maybe(hexish),
        antenna: maybe(fc.integer()),
        peakRssi: maybe(fc.double()),
        format: maybe(fc.constantFrom('epc', 'fastID')),
        PC: maybe(fc.stringMatching(/^[0-9a-f]{4}$/)),
      }),
    ),
  }),
  'csl-cs463': fc.record({
    rfidReaderName: maybe(fc.string()),
    tags: maybe(
      fc.array(
        maybe(
          fc.record({
            epc: maybe(hexish),
            timeStampOfRead: maybe(fc.oneof(fc.integer(), fc.double(), fc.string())),
            antennaPort: maybe(fc.oneof(fc.integer(), fc.string())),
            rssi: maybe(fc.oneof(fc.double(), fc.string())),
          }),
        ),
      ),
    ),
  }),
  'generic-json': fc.record({
    reader: maybe(fc.string()),
    reads: maybe(
      fc.array(
        maybe(
          fc.record({
            tag: maybe(hexish),
            tag_type: maybe(fc.constantFrom('rfid', 'ble', 'barcode', 'nfc')),
            antenna: maybe(fc.integer()),
            rssi: maybe(fc.double()),
            time: maybe(timeish),
          }),
        ),
      ),
    ),
  }),
};

/** Several values glued, newline-separated or in an array, with random junk spliced in. */
function packaged(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.array(value, { minLength: 1, maxLength: 5 }),
      fc.constantFrom('', '\n', ' ', ',', '\r\n'),
      fc.boolean(),
      fc.option(fc.tuple(fc.nat(), fc.string({ maxLength: 5 })), { nil: null }),
    )
    .map(([values, separator, asArray, splice]) => {
      let text = asArray
        ? JSON.stringify(values)
        : values.map((v) => JSON.stringify(v) ?? 'null').join(separator);
      if (splice) {
        const at = splice[0] % (text.length + 1);
        text = text.slice(0, at) + splice[1] + text.slice(at);
      }
      return text;
    });
}

describe('parsePayload never throws', () => {
  it.each(READER_FAMILIES)('%s: arbitrary text', (family) => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
        expectWellFormed(parsePayload(family, text));
      }),
      { numRuns: 200 },
    );
  });

  it.each(READER_FAMILIES)('%s: arbitrary bytes', (family) => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        expectWellFormed(parsePayload(family, Buffer.from(bytes)));
      }),
      { numRuns: 200 },
    );
  });

  it.each(READER_FAMILIES)('%s: arbitrary JSON', (family) => {
    fc.assert(
      fc.property(packaged(fc.jsonValue()), (text) => {
        expectWellFormed(parsePayload(family, text));
      }),
      { numRuns: 200 },
    );
  });

  it.each(READER_FAMILIES)('%s: payloads of every family, half right', (family) => {
    fc.assert(
      fc.property(packaged(fc.oneof(...Object.values(shaped))), (text) => {
        expectWellFormed(parsePayload(family, text));
        expectWellFormed(parsePayload(family, Buffer.from(text)));
      }),
      { numRuns: 200 },
    );
  });
});
