import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';

const event = (epc: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  timestamp: '2024-06-01T12:00:00.123456789Z',
  hostname: 'impinj-14-1b-b0',
  eventType: 'tagInventory',
  tagInventoryEvent: { antennaPort: 2, peakRssiCdbm: -6125, ...epc },
  ...extra,
});

const expectedRead = (tagValue: string) => ({
  tagValue,
  antenna: 2,
  rssi: -61.25,
  readerTime: Date.UTC(2024, 5, 1, 12, 0, 0, 123),
  readerId: 'impinj-14-1b-b0',
  tagType: 'rfid',
});

describe('impinj-r700', () => {
  const events = [
    event({ epcHex: 'E2801160600002054E3C5F4A' }),
    {
      timestamp: '2024-06-01T12:00:00Z',
      eventType: 'inventoryStatus',
      inventoryStatusEvent: { inventoryStatus: 'idle' },
    },
    event({ epcHex: '300833B2DDD9014000000000' }),
  ];
  const expected = [expectedRead('E2801160600002054E3C5F4A'), expectedRead('300833B2DDD9014000000000')];

  it('reads a webhook array, an NDJSON stream and single objects alike', () => {
    const asArray = JSON.stringify(events);
    const asPrettyArray = JSON.stringify(events, null, 2);
    const asNdjson = events.map((e) => JSON.stringify(e)).join('\n');
    const asCrlfNdjson = `${events.map((e) => JSON.stringify(e)).join('\r\n')}\r\n`;
    for (const payload of [asArray, asPrettyArray, asNdjson, asCrlfNdjson, Buffer.from(asNdjson)]) {
      expect(parsePayload('impinj-r700', payload)).toEqual({ reads: expected, errors: [], failed: 0 });
    }
    expect(parsePayload('impinj-r700', JSON.stringify(events[0]))).toEqual({
      reads: [expected[0]],
      errors: [],
      failed: 0,
    });
  });

  it('decodes a base64 epc, standard or URL-safe, padded or not', () => {
    for (const epc of ['4oARYGAAAgpmgfI/', '4oARYGAAAgpmgfI_', 'ikUCJA==', 'ikUCJA']) {
      const result = parsePayload('impinj-r700', JSON.stringify(event({ epc })));
      expect(result.errors).toEqual([]);
    }
    const decoded = (epc: string) =>
      parsePayload('impinj-r700', JSON.stringify(event({ epc }))).reads[0]?.tagValue;
    expect(decoded('4oARYGAAAgpmgfI_')).toBe('E28011606000020A6681F23F');
    expect(decoded('4oARYGAAAgpmgfI/')).toBe('E28011606000020A6681F23F');
    expect(decoded('ikUCJA==')).toBe('8A450224');
    expect(decoded('ikUCJA')).toBe('8A450224');
  });

  it('prefers epcHex over epc', () => {
    const result = parsePayload(
      'impinj-r700',
      JSON.stringify(event({ epc: 'ikUCJA==', epcHex: 'e2801160' })),
    );
    expect(result.reads.map((r) => r.tagValue)).toEqual(['E2801160']);
  });

  it('refuses an epc that is not base64', () => {
    for (const epc of ['ikUC JA==', 'ikU*JA==', 'ikUCJ', 'ikUCJA=', '', '====']) {
      const result = parsePayload('impinj-r700', JSON.stringify(event({ epc })));
      expect(result.reads).toEqual([]);
      expect(result.errors).toHaveLength(1);
      expect(result.errors[0]).toMatch(/^event 1: tagInventoryEvent\.epc /);
    }
  });

  it('takes lastSeenTime over the event timestamp, and leaves time, antenna and rssi null when absent', () => {
    const seen = parsePayload(
      'impinj-r700',
      JSON.stringify(event({ epcHex: 'E280', lastSeenTime: '2024-06-01T11:59:59.9876Z' })),
    );
    expect(seen.reads[0]?.readerTime).toBe(Date.UTC(2024, 5, 1, 11, 59, 59, 987));
    const bare = parsePayload(
      'impinj-r700',
      '{"eventType":"tagInventory","tagInventoryEvent":{"epc":"ikUCJA=="}}',
    );
    expect(bare).toEqual({
      reads: [
        {
          tagValue: '8A450224',
          antenna: null,
          rssi: null,
          readerTime: null,
          readerId: null,
          tagType: 'rfid',
        },
      ],
      errors: [],
      failed: 0,
    });
  });

  it('skips other events and reports objects that are not events', () => {
    const payload = [
      '{"timestamp":"2024-06-01T12:00:00Z","eventType":"antennaConnected","antennaConnectedEvent":{"antennaPort":1}}',
      '{"timestamp":"2024-06-01T12:00:00Z","eventType":"diagnostic","diagnosticEvent":{}}',
      '{"hello":"world"}',
      '{"eventType":"tagInventory"}',
      '[1]',
    ].join('\n');
    expect(parsePayload('impinj-r700', payload)).toEqual({
      reads: [],
      errors: [
        'event 3: not an Impinj IoT event: no eventType',
        'event 4: tagInventoryEvent is missing or not an object',
        'event 5: event is not a JSON object',
      ],
      failed: 3,
    });
  });

  it('keeps the good events around a malformed one', () => {
    const lines = [
      JSON.stringify(event({ epcHex: 'E2801160600002054E3C5F4A' })),
      '{"timestamp":"2024-06-01T12:00:00Z","eventType":"tagInventory","tagInventoryEvent":{"epcHex":',
      JSON.stringify(event({ epcHex: 'E28011606000020A6681F2G3' })),
      JSON.stringify(event({ epcHex: 'E280', peakRssiCdbm: 'loud' })),
      JSON.stringify(event({ epcHex: '300833B2DDD9014000000000' })),
    ];
    const result = parsePayload('impinj-r700', lines.join('\n'));
    expect(result.reads).toEqual(expected);
    expect(result.errors).toEqual([
      expect.stringMatching(/^line 2, offset \d+: truncated JSON value/),
      'event 2: tagInventoryEvent.epcHex "E28011606000020A6681F2G3" is not hexadecimal',
      'event 3: tagInventoryEvent.peakRssiCdbm must be a number, got "loud"',
    ]);
  });

  it("takes the webhook's empty batch and the newer event kinds as nothing to read", () => {
    // Reader Configuration REST API 1.7.0 (EventWebhookConfiguration): "If no events have queued
    // for delivery when the linger time elapses, an empty batch will be sent"; ReaderEvent also
    // carries antennaActivationEvent and overflowEvent, each with its eventType.
    expect(parsePayload('impinj-r700', '[]')).toEqual({ reads: [], errors: [], failed: 0 });
    const others = [
      { timestamp: '2024-06-01T12:00:00Z', eventType: 'overflow', overflowEvent: { purgedEventCount: 12 } },
      { timestamp: '2024-06-01T12:00:00Z', eventType: 'antennaActivation', antennaActivationEvent: {} },
    ];
    expect(parsePayload('impinj-r700', JSON.stringify(others))).toEqual({ reads: [], errors: [], failed: 0 });
  });

  it('reads an event without eventType that has a tagInventoryEvent (older client code), as documented', () => {
    const result = parsePayload(
      'impinj-r700',
      '{"timestamp":"2024-06-01T12:00:00Z","tagInventoryEvent":{"epcHex":"E280","antennaPort":2}}\n{"timestamp":"2024-06-01T12:00:00Z"}',
    );
    expect(result.reads.map((r) => [r.tagValue, r.antenna])).toEqual([['E280', 2]]);
    expect(result.errors).toEqual(['event 2: not an Impinj IoT event: no eventType']);
  });
});
