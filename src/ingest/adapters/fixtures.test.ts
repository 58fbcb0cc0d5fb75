import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';
import type { Read, ReaderFamily } from './types.js';

const FIXTURES = new URL('../../../test/fixtures/readers/', import.meta.url);

/** 2024-06-01 at the given UTC time of day. */
const june1 = (h: number, m: number, s: number, ms: number) => Date.UTC(2024, 5, 1, h, m, s, ms);

const rfid = (
  tagValue: string,
  antenna: number | null,
  rssi: number | null,
  readerTime: number | null,
  readerId: string | null,
): Read => ({ tagValue, antenna, rssi, readerTime, readerId, tagType: 'rfid' });

interface Expectation {
  reads: Read[];
  /** One pattern per expected error message, in order. */
  errors?: RegExp[];
}

/** Every file under test/fixtures/readers/<family>/ must be listed here with what it parses to. */
const EXPECTED: Record<ReaderFamily, Record<string, Expectation>> = {
  'impinj-r700': {
    // Webhook body: a JSON array; the inventoryStatus event is skipped; epcHex wins over epc;
    // readerTime is lastSeenTime when reported, else the event timestamp (nanoseconds truncated).
    'webhook-array.json': {
      reads: [
        rfid('E2801160600002054E3C5F4A', 1, -54, june1(12, 0, 0, 101), 'impinj-14-1b-b0'),
        rfid('300833B2DDD9014000000000', 2, -61.5, june1(12, 0, 0, 244), 'impinj-14-1b-b0'),
        rfid('E2806894000050221BB7D3E9', 4, -73.25, june1(12, 0, 1, 908), 'impinj-14-1b-b0'),
      ],
    },
    // HTTP stream / MQTT with the default eventConfig: base64 epc only (URL-safe alphabet), no hostname.
    'stream.ndjson': {
      reads: [
        rfid('E2801191A5030065F26CCBFF', 1, -74, june1(12, 0, 0, 432), null),
        rfid('3034257BF7194E4000000001', 3, -48.25, june1(12, 0, 0, 518), null),
        rfid('8A450224', 2, -80.1, june1(12, 0, 0, 900), null),
      ],
    },
    'single-event.json': {
      reads: [rfid('E28011606000020A6681F23F', 1, -52.34, june1(14, 30, 15, 199), 'impinj-14-2a-7c')],
    },
    'malformed-lines.ndjson': {
      reads: [
        rfid('E2801160600002054E3C5F4A', 1, -54, june1(12, 0, 0, 100), 'impinj-14-1b-b0'),
        rfid('E2806894000050221BB7D3E9', 2, -59, june1(12, 0, 0, 800), 'impinj-14-1b-b0'),
      ],
      errors: [
        /^line 2, offset \d+: truncated JSON value/,
        /^event 2: tagInventoryEvent\.epcHex "E28011606000020A6681F2G3" is not hexadecimal$/,
        /^event 3: tagInventoryEvent has neither epcHex nor epc$/,
        /^event 4: timestamp "2024-13-01T12:00:00\.500000000Z" is not an RFC 3339 timestamp$/,
        /^event 6: tagInventoryEvent\.antennaPort must be an integer/,
      ],
    },
  },
  'zebra-fx': {
    'simple-single.json': {
      reads: [rfid('E280689400005003E7C5F1A2', 1, -55, june1(12, 0, 0, 123), null)],
    },
    // HTTP POST: events glued together with no separator; one carries hostName and MAC.
    'http-post-glued.txt': {
      reads: [
        rfid('E28011700000020D2A412182', 1, -60, june1(7, 20, 13, 28), null),
        rfid('E28011700000020D2A40C095', 2, -61, june1(7, 20, 13, 69), null),
        rfid('E28011700000020D2A412B0C', 3, -63, june1(7, 20, 13, 112), 'FX9600EECCA8'),
      ],
    },
    // MQTT batching: a JSON array; the second event's clock is at -0500.
    'mqtt-batch-array.json': {
      reads: [
        rfid('AD99160040AAC99525000025', 1, -54, june1(10, 14, 42, 851), null),
        rfid('E2003411B802011383257C3D', 4, -71, june1(10, 14, 43, 7), null),
      ],
    },
    // FastID: idHex is EPC + TID; the EPC length comes from PC ("3000": 6 words), else a 96-bit TID is assumed.
    'fastid-custom.json': {
      reads: [
        rfid('E28011B0A5050076C4D7530A', 5, -24, june1(9, 25, 54, 162), null),
        rfid('E28011B0A505007698CA0895', 5, -31, june1(9, 25, 54, 201), null),
      ],
    },
    // CUSTOM mode with no tag metadata selected: only eventNum, format and idHex, the reader's
    // clock at -0600 (the FXR90 events two race-timing integrations quote verbatim).
    'custom-epc-only.txt': {
      reads: [
        rfid('000000000000000000000343', null, null, Date.UTC(2024, 8, 5, 7, 7, 1, 785), null),
        rfid('000000000000000000000344', null, null, Date.UTC(2024, 8, 5, 7, 7, 1, 802), null),
      ],
    },
    'mixed-management.txt': {
      reads: [
        rfid('E28011700000020D2A412182', 1, -60, june1(7, 20, 13, 28), null),
        rfid('E28011700000020D2A40C095', 2, -58, june1(7, 20, 13, 544), null),
      ],
      errors: [
        /^event 3: data\.idHex is missing$/,
        /^event 4: timestamp "2024-06-01 07:20:13" is not an RFC 3339 timestamp$/,
      ],
    },
  },
  'csl-cs463': {
    'single-tag.json': {
      reads: [rfid('E2801190A503006543E21224', 1, -56, june1(12, 0, 0, 123), 'cs463-214')],
    },
    // String antennaPort and rssi (the reader's AntennaPort / RSSI fields); microseconds truncated.
    'multi-tag.json': {
      reads: [
        rfid('712AC12F1007000000224403', 1, -70.2, june1(12, 0, 1, 281), 'CS463-1'),
        rfid('E2801190A503006543E0E3A4', 2, -61.5, june1(12, 0, 1, 297), 'CS463-1'),
        rfid('E2801190A503006543E0E3A4', 2, -60.9, june1(12, 0, 1, 412), 'CS463-1'),
      ],
    },
    // Numeric antennaPort and rssi (AntennaPort_Number / RSSI_Number); no reader identity in the payload.
    'numeric-fields.json': {
      reads: [
        rfid('E28068940000501EC7A2F4D1', 3, -48.5, june1(12, 1, 0, 500), null),
        rfid('E28068940000401EC7A2A0B7', 4, -66, june1(12, 1, 0, 733), null),
      ],
    },
    // The fields of the reader's preloaded "Example Tag Upload to Cloud Server Data Format" as
    // reelyactive/barnowl-csl (README.md, lib/testlistener.js) lists and simulates them: the
    // reader names itself only by MAC, the Ethernet one empty on Wi-Fi. Its timeOfRead (local
    // time, with the offset in timeZone) is not read: its text form is unconfirmed
    // (docs/reader-formats.md), so readerTime is null.
    'example-cloud-format.json': {
      reads: [
        rfid('7EDA9038051002710002C0AE', 1, -70, null, '00057B870001'),
        rfid('E2801190A503006543E0E3A4', 2, -64, null, '00057B870001'),
      ],
    },
    'bad-tag-between.json': {
      reads: [
        rfid('E2801190A503006543E21224', 1, -55, june1(12, 1, 40, 0), 'CS463-DOCK'),
        rfid('E2801190A503006543E21228', 2, -59, june1(12, 1, 40, 40), 'CS463-DOCK'),
      ],
      errors: [
        /^tag 2: epc "E2801190ZZ03006543E21225" is not hexadecimal$/,
        /^tag 3: timeStampOfRead must be microseconds since the epoch, got "yesterday"$/,
        /^tag 4: epc is missing$/,
      ],
    },
  },
  'generic-json': {
    'batch.json': {
      reads: [
        rfid('E2801160600002054E3C5F4A', 1, -60.5, june1(12, 0, 0, 123), 'dock-3-handheld'),
        rfid('E28011606000020A6681F23F', 2, -71, june1(12, 0, 0, 500), 'dock-3-handheld'),
        {
          tagValue: 'AC233FA0129B',
          tagType: 'ble',
          antenna: null,
          rssi: -82,
          readerTime: june1(12, 0, 1, 0),
          readerId: 'dock-3-handheld',
        },
        {
          tagValue: 'ASSET-0042',
          tagType: 'barcode',
          antenna: null,
          rssi: null,
          readerTime: june1(12, 0, 2, 999),
          readerId: 'dock-3-handheld',
        },
      ],
    },
    'single-read.json': {
      reads: [rfid('300833B2DDD9014000000000', 3, -55.25, june1(12, 0, 0, 0), null)],
    },
    'array.json': {
      reads: [
        rfid('E28068940000501EC7A2F4D1', null, null, june1(12, 0, 0, 0), null),
        rfid('E28068940000401EC7A2A0B7', 0, -40, null, null),
        {
          tagValue: '0123456789',
          tagType: 'barcode',
          antenna: null,
          rssi: null,
          readerTime: june1(12, 0, 0, 100),
          readerId: 'packing-station-2',
        },
      ],
    },
    'bad-items.json': {
      reads: [
        rfid('E2801190A503006543E21224', 1, -50, june1(12, 0, 0, 0), 'gate-1'),
        rfid('E2801190A50300654321122A', 2, -52, june1(12, 0, 1, 0), 'gate-1'),
      ],
      errors: [
        /^read 2: tag "not-hex!" is not hexadecimal$/,
        /^read 3: tag is missing$/,
        /^read 4: tag_type must be one of rfid, ble, barcode, got "nfc"$/,
        /^read 5: time "2024\/06\/01 12:00:00" is not an RFC 3339 timestamp$/,
        /^read 6: antenna must be an integer from 0 to 65535, got 1\.5$/,
        /^read 7: rssi must be a number, got "strong"$/,
        /^read 8: read is not a JSON object$/,
      ],
    },
  },
};

describe.each(Object.entries(EXPECTED))('recorded %s payloads', (family, files) => {
  const dir = new URL(`${family}/`, FIXTURES);

  it('has an expectation for every fixture file', () => {
    expect(readdirSync(dir).sort()).toEqual(Object.keys(files).sort());
  });

  it.each(Object.entries(files))('%s', (file, expected) => {
    const bytes = readFileSync(new URL(file, dir));
    for (const payload of [bytes, bytes.toString('utf8')]) {
      const result = parsePayload(family as ReaderFamily, payload);
      expect(result.reads).toStrictEqual(expected.reads);
      const patterns = expected.errors ?? [];
      expect(result.errors).toHaveLength(patterns.length);
      result.errors.forEach((message, i) => {
        expect(message).toMatch(patterns[i] as RegExp);
      });
    }
  });
});
