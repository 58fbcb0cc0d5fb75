import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';

const tagEvent = (idHex: string, n: number, extra: Record<string, unknown> = {}) => ({
  data: { antenna: 1, eventNum: n, format: 'epc', idHex, peakRssi: -55, reads: 1, ...extra },
  timestamp: '2024-06-01T12:00:00.123+0000',
  type: 'SIMPLE',
});

const read = (tagValue: string) => ({
  tagValue,
  antenna: 1,
  rssi: -55,
  readerTime: Date.UTC(2024, 5, 1, 12, 0, 0, 123),
  readerId: null,
  tagType: 'rfid',
});

describe('zebra-fx', () => {
  const events = [tagEvent('e2801160600002054e3c5f4a', 1), tagEvent('300833b2ddd9014000000000', 2)];
  const expected = [read('E2801160600002054E3C5F4A'), read('300833B2DDD9014000000000')];

  it('splits objects glued together without separators', () => {
    const glued = events.map((e) => JSON.stringify(e)).join('');
    expect(glued).toContain('}{');
    expect(parsePayload('zebra-fx', glued)).toEqual({ reads: expected, errors: [], failed: 0 });
    expect(parsePayload('zebra-fx', Buffer.from(glued))).toEqual({ reads: expected, errors: [], failed: 0 });
  });

  it('is not fooled by braces and quotes inside strings', () => {
    const tricky = events
      .map((e, i) => JSON.stringify({ ...e, note: i === 0 ? '}{"x":"\\"}' : '[[' }))
      .join('');
    expect(parsePayload('zebra-fx', tricky)).toEqual({ reads: expected, errors: [], failed: 0 });
  });

  it('reads an array, newline-separated objects and a single object', () => {
    expect(parsePayload('zebra-fx', JSON.stringify(events))).toEqual({
      reads: expected,
      errors: [],
      failed: 0,
    });
    expect(parsePayload('zebra-fx', events.map((e) => JSON.stringify(e)).join('\n'))).toEqual({
      reads: expected,
      errors: [],
      failed: 0,
    });
    expect(parsePayload('zebra-fx', JSON.stringify(events[1]))).toEqual({
      reads: [expected[1]],
      errors: [],
      failed: 0,
    });
  });

  it('parses the timestamp offset without a colon', () => {
    const result = parsePayload(
      'zebra-fx',
      JSON.stringify({ ...events[0], timestamp: '2024-06-01T08:00:00.5-0400' }),
    );
    expect(result.reads[0]?.readerTime).toBe(Date.UTC(2024, 5, 1, 12, 0, 0, 500));
  });

  it('takes the reader identity from hostName, else MAC', () => {
    const named = parsePayload(
      'zebra-fx',
      JSON.stringify(tagEvent('E280', 1, { hostName: 'FX9600EECCA8', MAC: 'x' })),
    );
    expect(named.reads[0]?.readerId).toBe('FX9600EECCA8');
    const mac = parsePayload('zebra-fx', JSON.stringify(tagEvent('E280', 1, { MAC: '84:24:8D:EE:CC:A8' })));
    expect(mac.reads[0]?.readerId).toBe('84:24:8D:EE:CC:A8');
  });

  it('takes data.rssi when peakRssi is absent or null (null is absent, as for every field)', () => {
    for (const peakRssi of [undefined, null]) {
      const event = tagEvent('E280', 1, { peakRssi, rssi: -61 });
      expect(parsePayload('zebra-fx', JSON.stringify(event)).reads[0]?.rssi).toBe(-61);
    }
    expect(parsePayload('zebra-fx', JSON.stringify(tagEvent('E280', 1, { rssi: -61 }))).reads[0]?.rssi).toBe(
      -55,
    );
  });

  it('keeps the good objects around malformed ones', () => {
    const payload = [
      JSON.stringify(events[0]),
      JSON.stringify(tagEvent('e28011606000020a6681f2g3', 3)),
      '{"data":{"antenna":1}}}',
      JSON.stringify({ ...tagEvent('E280', 4), timestamp: 'Sat Jun 1 12:00:00 2024' }),
      JSON.stringify({ type: 'SIMPLE', timestamp: '2024-06-01T12:00:00.123+0000' }),
      JSON.stringify(tagEvent('E280', 5, { antenna: -1 })),
      JSON.stringify(events[1]),
    ].join('');
    const result = parsePayload('zebra-fx', payload);
    expect(result.reads).toEqual(expected);
    expect(result.errors).toEqual([
      expect.stringMatching(/^line 1, offset \d+: unexpected "}" outside a JSON object or array$/),
      'event 2: data.idHex "e28011606000020a6681f2g3" is not hexadecimal',
      'event 3: data.idHex is missing',
      'event 4: timestamp "Sat Jun 1 12:00:00 2024" is not an RFC 3339 timestamp',
      'event 5: data is missing or not an object',
      'event 6: data.antenna must be an integer from 0 to 65535, got -1',
    ]);
  });

  it('skips management events', () => {
    const payload = [
      '{"component":"RG","data":{"radio_control":{}},"eventNum":372,"timestamp":"2024-06-01T07:19:57.878+0000","type":"heartbeat"}',
      '{"data":{"pin":1,"state":"HIGH"},"timestamp":"2024-06-01T07:19:58.000+0000","type":"GPI"}',
      JSON.stringify(events[0]),
    ].join('');
    expect(parsePayload('zebra-fx', payload)).toEqual({ reads: [expected[0]], errors: [], failed: 0 });
  });
});
