import { describe, expect, it } from 'vitest';
import { parsePayload } from './index.js';

const message = (tags: unknown[], header: Record<string, unknown> = { rfidReaderName: 'CS463-1' }) =>
  JSON.stringify({ sequenceNumber: 3, ...header, numberOfTags: tags.length, tags });

describe('csl-cs463', () => {
  it('converts microsecond timestamps to milliseconds, truncating', () => {
    const result = parsePayload(
      'csl-cs463',
      message([
        { epc: 'E280', timeStampOfRead: 1717243200123999, antennaPort: 1, rssi: '-61.5' },
        { epc: 'E281', timeStampOfRead: '1717243200000001', antennaPort: '2', rssi: -70 },
      ]),
    );
    expect(result).toEqual({
      reads: [
        {
          tagValue: 'E280',
          antenna: 1,
          rssi: -61.5,
          readerTime: Date.UTC(2024, 5, 1, 12, 0, 0, 123),
          readerId: 'CS463-1',
          tagType: 'rfid',
        },
        {
          tagValue: 'E281',
          antenna: 2,
          rssi: -70,
          readerTime: Date.UTC(2024, 5, 1, 12),
          readerId: 'CS463-1',
          tagType: 'rfid',
        },
      ],
      errors: [],
      failed: 0,
    });
  });

  it('names the reader by name, else serial number, else Ethernet MAC, else Wi-Fi MAC address', () => {
    const id = (header: Record<string, unknown>) =>
      parsePayload('csl-cs463', message([{ epc: 'E280' }], header)).reads[0]?.readerId;
    expect(id({ rfidReaderName: 'CS463-1', rfidReaderSerialNumber: '4632' })).toBe('CS463-1');
    expect(id({ rfidReaderName: '', rfidReaderSerialNumber: '4632' })).toBe('4632');
    expect(id({ pcEthernetMACAddress: '00:1B:5F:40:A1:22' })).toBe('00:1B:5F:40:A1:22');
    // A reader on Wi-Fi: the Ethernet MAC is sent empty (barnowl-csl's required fields).
    expect(id({ pcEthernetMACAddress: '', pcWiFiMACAddress: '00057B870001' })).toBe('00057B870001');
    expect(id({})).toBeNull();
  });

  it('reads an array of messages', () => {
    const payload = `[${message([{ epc: 'E280' }])},${message([{ epc: 'E281' }], { rfidReaderName: 'CS463-2' })}]`;
    expect(parsePayload('csl-cs463', payload).reads.map((r) => [r.tagValue, r.readerId])).toEqual([
      ['E280', 'CS463-1'],
      ['E281', 'CS463-2'],
    ]);
  });

  it('skips a status message and reports a message without tags', () => {
    const status =
      '{"sequenceNumber":9,"rfidReaderName":"CS463-1","rfidReaderModel":"CS463","antennaPortEnabled":"1,2"}';
    expect(parsePayload('csl-cs463', status)).toEqual({ reads: [], errors: [], failed: 0 });
    expect(parsePayload('csl-cs463', '{"sequenceNumber":9}').errors).toEqual([
      'message 1: message has no tags array',
    ]);
    expect(parsePayload('csl-cs463', '{"tags":{"epc":"E280"}}').errors).toEqual([
      'message 1: tags must be an array',
    ]);
  });

  it('keeps the good tags around malformed ones', () => {
    const result = parsePayload(
      'csl-cs463',
      message([
        { epc: 'E280', timeStampOfRead: 1717243200000000 },
        { epc: 'E280G1' },
        { epc: 'E282', timeStampOfRead: -5 },
        { epc: 'E283', timeStampOfRead: 1.5e20 },
        { epc: 'E284', rssi: '-6O' },
        { epc: 'E285', antennaPort: 'A' },
        null,
        { epc: 'E287', timeStampOfRead: 1717243200001000 },
      ]),
    );
    expect(result.reads.map((r) => [r.tagValue, r.readerTime])).toEqual([
      ['E280', Date.UTC(2024, 5, 1, 12)],
      ['E287', Date.UTC(2024, 5, 1, 12, 0, 0, 1)],
    ]);
    expect(result.errors).toEqual([
      'tag 2: epc "E280G1" is not hexadecimal',
      'tag 3: timeStampOfRead must be a non-negative integer of microseconds, got -5',
      'tag 4: timeStampOfRead must be a non-negative integer of microseconds, got 150000000000000000000',
      'tag 5: rssi must be a number, got "-6O"',
      'tag 6: antennaPort must be an integer, got "A"',
      'tag 7: tag is not a JSON object',
    ]);
  });
});
