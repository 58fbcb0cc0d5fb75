import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';
import { READER_FAMILIES, type Read, type ReaderFamily, type TagType } from './types.js';

// Round trip: valid reads written in each family's format come back unchanged.

const hexDigits = (min: number, max: number) =>
  fc.stringMatching(new RegExp(`^[0-9A-F]{${min},${max}}$`)).filter((s) => s.length >= min);
const bytesHex = fc
  .uint8Array({ minLength: 1, maxLength: 32 })
  .map((b) => Buffer.from(b).toString('hex').toUpperCase());
const antenna = fc.option(fc.integer({ min: 0, max: 65535 }), { nil: null });
const time = fc.option(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }), { nil: null });
const dbm = fc.double({ min: -130, max: 20, noNaN: true }).map((x) => x + 0); // + 0 turns -0 into 0
const readerName = fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,24}$/), { nil: null });

/** An RFC 3339 rendering of ms: any offset, with or without its colon, extra sub-millisecond digits. */
const rfc3339 = (ms: number) =>
  fc
    .tuple(
      fc.integer({ min: -14 * 60, max: 14 * 60 }),
      fc.boolean(),
      fc.stringMatching(/^[0-9]{0,6}$/),
      fc.boolean(),
    )
    .map(([offset, colon, extraDigits, zulu]) => {
      const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1) + extraDigits;
      if (offset === 0 && zulu) return `${local}Z`;
      const abs = Math.abs(offset);
      const hh = String(Math.floor(abs / 60)).padStart(2, '0');
      const mm = String(abs % 60).padStart(2, '0');
      return `${local}${offset < 0 ? '-' : '+'}${hh}${colon ? ':' : ''}${mm}`;
    });

/** Write the time (when there is one) under key, in some RFC 3339 rendering. */
const withTime = (ms: number | null, key: string) =>
  ms === null ? fc.constant({}) : rfc3339(ms).map((text) => ({ [key]: text }));

const maybeLower = (hex: string) => fc.boolean().map((lower) => (lower ? hex.toLowerCase() : hex));

function joinVariants(items: unknown[], allowGlued: boolean): fc.Arbitrary<string> {
  const lines = items.map((i) => JSON.stringify(i));
  const variants = [
    JSON.stringify(items),
    JSON.stringify(items, null, 2),
    lines.join('\n'),
    `${lines.join('\r\n')}\r\n`,
    ...(allowGlued ? [lines.join('')] : []),
    ...(items.length === 1 ? [lines[0] as string] : []),
  ];
  return fc.constantFrom(...variants);
}

interface Case {
  reads: Read[];
  payload: string;
}

const impinjCase: fc.Arbitrary<Case> = fc
  .array(
    fc.record({
      tag: bytesHex,
      antenna,
      cdbm: fc.option(fc.integer({ min: -12000, max: 500 })),
      time,
      host: readerName,
    }),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .chain((reads) =>
    fc
      .tuple(
        ...reads.map((r) =>
          fc
            .tuple(
              fc.constantFrom('epcHex', 'base64', 'base64url', 'both'),
              maybeLower(r.tag),
              fc.boolean(),
              withTime(r.time, 'at'),
              fc.boolean(),
            )
            .map(([how, hex, unpadded, at, inLastSeen]) => {
              const bytes = Buffer.from(r.tag, 'hex');
              let epc = bytes.toString(how === 'base64url' ? 'base64url' : 'base64');
              if (unpadded) epc = epc.replace(/=+$/, '');
              const inventory: Record<string, unknown> = {};
              if (how !== 'epcHex') inventory.epc = epc;
              if (how === 'epcHex' || how === 'both') inventory.epcHex = hex;
              if (r.antenna !== null) inventory.antennaPort = r.antenna;
              if (r.cdbm !== null) inventory.peakRssiCdbm = r.cdbm;
              const event: Record<string, unknown> = {
                eventType: 'tagInventory',
                tagInventoryEvent: inventory,
              };
              const timeText = (at as { at?: string }).at;
              if (timeText !== undefined) {
                if (inLastSeen) {
                  inventory.lastSeenTime = timeText;
                  event.timestamp = '2099-01-01T00:00:00.000000000Z'; // queued later; lastSeenTime wins
                } else event.timestamp = timeText;
              }
              if (r.host !== null) event.hostname = r.host;
              return event;
            }),
        ),
      )
      .chain((events) => {
        const all = [
          { timestamp: '2024-06-01T00:00:00Z', eventType: 'inventoryStatus', inventoryStatusEvent: {} },
          ...events,
        ];
        return joinVariants(all, false);
      })
      .map((payload) => ({
        payload,
        reads: reads.map((r) => ({
          antenna: r.antenna,
          tagValue: r.tag,
          rssi: r.cdbm === null ? null : r.cdbm / 100,
          readerTime: r.time,
          readerId: r.host,
          tagType: 'rfid' as const,
        })),
      })),
  );

const zebraCase: fc.Arbitrary<Case> = fc
  .array(fc.record({ tag: hexDigits(1, 64), antenna, rssi: fc.option(dbm), time, host: readerName }), {
    minLength: 1,
    maxLength: 6,
  })
  .chain((reads) =>
    fc
      .tuple(
        ...reads.map((r, n) =>
          fc.tuple(maybeLower(r.tag), withTime(r.time, 'timestamp')).map(([idHex, timestamp]) => {
            const data: Record<string, unknown> = { eventNum: n + 1, format: 'epc', idHex, reads: 1 };
            if (r.antenna !== null) data.antenna = r.antenna;
            if (r.rssi !== null) data.peakRssi = r.rssi;
            if (r.host !== null) data.hostName = r.host;
            return { data, ...timestamp, type: 'SIMPLE' };
          }),
        ),
      )
      .chain((events) =>
        joinVariants(
          [
            {
              component: 'RG',
              data: {},
              eventNum: 1,
              timestamp: '2024-06-01T00:00:00.000+0000',
              type: 'heartbeat',
            },
            ...events,
          ],
          true,
        ),
      )
      .map((payload) => ({
        payload,
        reads: reads.map((r) => ({
          antenna: r.antenna,
          tagValue: r.tag,
          rssi: r.rssi,
          readerTime: r.time,
          readerId: r.host,
          tagType: 'rfid' as const,
        })),
      })),
  );

const cslTag = fc.record({
  tag: hexDigits(1, 64),
  antenna,
  decis: fc.option(fc.integer({ min: -1200, max: 200 })),
  time,
  micros: fc.integer({ min: 0, max: 999 }),
  asStrings: fc.boolean(),
});
const cslCase: fc.Arbitrary<Case> = fc
  .array(fc.record({ name: readerName, tags: fc.array(cslTag, { minLength: 0, maxLength: 5 }) }), {
    minLength: 1,
    maxLength: 3,
  })
  .chain((messages) =>
    fc
      .tuple(
        ...messages.map((m, seq) =>
          fc.tuple(...m.tags.map((t) => maybeLower(t.tag))).map((epcs) => {
            const tags = m.tags.map((t, i) => {
              const tag: Record<string, unknown> = { epc: epcs[i], timeZone: '+0:00' };
              if (t.time !== null) tag.timeStampOfRead = t.time * 1000 + t.micros;
              if (t.antenna !== null) tag.antennaPort = t.asStrings ? String(t.antenna) : t.antenna;
              if (t.decis !== null) tag.rssi = t.asStrings ? (t.decis / 10).toFixed(1) : t.decis / 10;
              return tag;
            });
            const message: Record<string, unknown> = { sequenceNumber: seq, numberOfTags: tags.length, tags };
            if (m.name !== null) message.rfidReaderName = m.name;
            return message;
          }),
        ),
      )
      .chain((payloadMessages) =>
        payloadMessages.length === 1
          ? fc.constantFrom(JSON.stringify(payloadMessages[0]), JSON.stringify(payloadMessages))
          : joinVariants(payloadMessages, true),
      )
      .map((payload) => ({
        payload,
        reads: messages.flatMap((m) =>
          m.tags.map((t) => ({
            antenna: t.antenna,
            tagValue: t.tag,
            rssi: t.decis === null ? null : Number((t.decis / 10).toFixed(1)),
            readerTime: t.time,
            readerId: m.name,
            tagType: 'rfid' as const,
          })),
        ),
      })),
  );

const genericTag: fc.Arbitrary<{ type: TagType; value: string }> = fc.oneof(
  hexDigits(1, 64).map((value) => ({ type: 'rfid' as const, value })),
  hexDigits(12, 12).map((value) => ({ type: 'ble' as const, value })),
  fc.stringMatching(/^[!-~](?:[ -~]{0,30}[!-~])?$/).map((value) => ({ type: 'barcode' as const, value })),
);
const genericCase: fc.Arbitrary<Case> = fc
  .tuple(
    fc.array(fc.record({ tag: genericTag, antenna, rssi: fc.option(dbm), time, reader: readerName }), {
      minLength: 1,
      maxLength: 6,
    }),
    fc.boolean(),
  )
  .chain(([reads, explicitType]) =>
    fc
      .tuple(
        ...reads.map((r) =>
          withTime(r.time, 'time').map((t) => {
            const item: Record<string, unknown> = { tag: r.tag.value, ...t };
            if (explicitType || r.tag.type !== 'rfid') item.tag_type = r.tag.type;
            if (r.antenna !== null) item.antenna = r.antenna;
            if (r.rssi !== null) item.rssi = r.rssi;
            if (r.reader !== null) item.reader = r.reader;
            return item;
          }),
        ),
      )
      .chain((items) => {
        const variants = [
          JSON.stringify({ reads: items }),
          JSON.stringify(items),
          JSON.stringify({ reads: items }, null, 1),
        ];
        const shared = reads[0]?.reader;
        if (shared && reads.every((r) => r.reader === shared)) {
          variants.push(
            JSON.stringify({ reader: shared, reads: items.map(({ reader: _, ...rest }) => rest) }),
          );
        }
        if (items.length === 1) variants.push(JSON.stringify(items[0]));
        return fc.constantFrom(...variants);
      })
      .map((payload) => ({
        payload,
        reads: reads.map((r) => ({
          antenna: r.antenna,
          tagValue: r.tag.value,
          rssi: r.rssi,
          readerTime: r.time,
          readerId: r.reader,
          tagType: r.tag.type,
        })),
      })),
  );

const CASES: Record<ReaderFamily, fc.Arbitrary<Case>> = {
  'impinj-r700': impinjCase,
  'zebra-fx': zebraCase,
  'csl-cs463': cslCase,
  'generic-json': genericCase,
};

describe('round trip', () => {
  it.each(READER_FAMILIES)('%s: generated reads come back from their serialized payload', (family) => {
    fc.assert(
      fc.property(CASES[family], fc.boolean(), ({ payload, reads }, asBuffer) => {
        const result = parsePayload(family, asBuffer ? Buffer.from(payload) : payload);
        expect(result.errors).toEqual([]);
        expect(result.reads).toStrictEqual(reads);
      }),
      { numRuns: 120 },
    );
  });
});
