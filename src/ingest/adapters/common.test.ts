import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Collector, jsonErrorAt, MAX_ERRORS, parseRfc3339, scanSegments, splitJsonValues } from './common.js';
import { MAX_PAYLOAD_BYTES, normalizeTagValue, parsePayload, tagMatchKey } from './index.js';

describe('normalizeTagValue', () => {
  it('upper-cases and drops whitespace, colons and dashes', () => {
    expect(normalizeTagValue('e2:80-11 60\t60\n00')).toBe('E28011606000');
    expect(normalizeTagValue('  300833b2ddd9014000000000 ')).toBe('300833B2DDD9014000000000');
    expect(normalizeTagValue('')).toBe('');
  });
});

describe('tagMatchKey', () => {
  it('ignores case, separators and leading zeros', () => {
    expect(tagMatchKey('00e2-80')).toBe('E280');
    expect(tagMatchKey('E280')).toBe(tagMatchKey('0000e280'));
    expect(tagMatchKey('0123456789')).toBe('123456789');
  });

  it('maps an all-zero value to "0"', () => {
    expect(tagMatchKey('0')).toBe('0');
    expect(tagMatchKey('0000:0000')).toBe('0');
    expect(tagMatchKey('')).toBe('');
  });
});

describe('parseRfc3339', () => {
  const at = Date.UTC(2024, 5, 1, 12, 0, 0, 123);

  it.each([
    ['2024-06-01T12:00:00.123Z', at],
    ['2024-06-01T12:00:00.123+0000', at],
    ['2024-06-01T12:00:00.123+00:00', at],
    ['2024-06-01T14:00:00.123+02:00', at],
    ['2024-06-01T07:00:00.123-0500', at],
    ['2024-06-01T12:00:00.123456789Z', at],
    ['2024-06-01T12:00:00.1239Z', at],
    ['2024-06-01T12:00:00.12Z', Date.UTC(2024, 5, 1, 12, 0, 0, 120)],
    ['2024-06-01T12:00:00Z', Date.UTC(2024, 5, 1, 12, 0, 0)],
    ['2024-06-01t12:00:00z', Date.UTC(2024, 5, 1, 12, 0, 0)],
    ['2024-06-01 12:00:00Z', Date.UTC(2024, 5, 1, 12, 0, 0)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['0001-01-01T00:00:00Z', -62135596800000],
    ['0099-12-31T23:59:59.999Z', -59011459200001],
  ])('%s', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });

  it.each([
    '2024-06-01',
    '2024-06-01T12:00:00',
    '2024/06/01T12:00:00Z',
    '2024-13-01T12:00:00Z',
    '2023-02-29T12:00:00Z',
    '2024-04-31T12:00:00Z',
    '2024-06-01T24:00:00Z',
    '2024-06-01T12:60:00Z',
    '2024-06-01T12:00:00.Z',
    '2024-06-01T12:00:00+25:00',
    '2024-06-01T12:00:00+0060',
    '2024-06-01T12:00:00 Z',
    '',
    'yesterday',
  ])('refuses %j', (text) => {
    expect(parseRfc3339(text)).toBeNull();
  });
});

describe('scanSegments', () => {
  it('splits glued, whitespace- and comma-separated values and ignores braces inside strings', () => {
    const text = '{"a":"}{"}{"b":[1,{"c":"\\"}"}]}\n[2] ,{"d":1}';
    expect(scanSegments(text).map((s) => [s.kind, s.text])).toEqual([
      ['value', '{"a":"}{"}'],
      ['value', '{"b":[1,{"c":"\\"}"}]}'],
      ['value', '[2]'],
      ['value', '{"d":1}'],
    ]);
  });

  it('reports text outside values as garbage and an unclosed value as truncated', () => {
    expect(scanSegments('x {"a":1} }} {"b":').map((s) => s.kind)).toEqual([
      'garbage',
      'value',
      'garbage',
      'truncated',
    ]);
  });
});

describe('jsonErrorAt', () => {
  const parses = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };

  it.each([
    ['{"a":[1,-2.5e+3,true,false,null,"\\u00e9\\n"]}', -1],
    [' [ ] ', -1],
    ['{}', -1],
    ['"x"', -1],
    ['-0', -1],
    ['{"a":1,}', 7],
    ['[1,]', 3],
    ['[01]', 2],
    ['[1.]', 3],
    ['[.5]', 1],
    ['{"a" 1}', 5],
    ['{a:1}', 1],
    ['["\\x"]', 2],
    ['["\\u12G4"]', 2],
    ['[tru]', 1],
    ['{]', 1],
    ['[1}', 2],
    ['[1] [2]', 4],
    ['', 0],
  ])('%j', (text, expected) => {
    expect(jsonErrorAt(text)).toBe(expected);
    expect(parses(text)).toBe(expected === -1);
  });

  /** JSON text, pretty or compact, with one character inserted, deleted or replaced. */
  const mutatedJson = fc
    .tuple(
      fc.jsonValue(),
      fc.constantFrom(undefined, 1, '\t'),
      fc.nat(),
      fc.constantFrom('insert', 'delete', 'replace'),
    )
    .chain(([value, indent, at, how]) =>
      fc.constantFrom(...'{}[],:"\\ 0-.eE+tfnu\n\u0001x').map((ch) => {
        const text = JSON.stringify(value, null, indent);
        const i = at % (text.length + 1);
        if (how === 'insert') return text.slice(0, i) + ch + text.slice(i);
        if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
        return text.slice(0, i) + ch + text.slice(i + 1);
      }),
    );

  it('agrees with JSON.parse', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), mutatedJson), (text) => {
        expect(jsonErrorAt(text) === -1).toBe(parses(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('splitJsonValues', () => {
  const split = (text: string) => {
    const out = new Collector();
    const values = splitJsonValues(text, out);
    return { values, errors: out.result().errors };
  };

  it('takes a whole document as one value', () => {
    expect(split(' [{"a":1},{"b":2}] ')).toEqual({ values: [[{ a: 1 }, { b: 2 }]], errors: [] });
  });

  it('recovers the lines after a truncated NDJSON line', () => {
    const { values, errors } = split('{"a":1}\n{"b":\n{"c":3}\n{"d":"x\n{"e":5}');
    expect(values).toEqual([{ a: 1 }, { c: 3 }, { e: 5 }]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^line 2, offset 8: truncated JSON value/);
    expect(errors[1]).toMatch(/^line 4, offset 22: truncated JSON value/);
  });

  it('reports a malformed multi-line document once', () => {
    const { values, errors } = split('[\n  {\n    "a": 1,,\n  }\n]');
    expect(values).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe('line 3, offset 17: invalid JSON at ",\\n  }\\n]"');
  });

  it('reports an empty payload', () => {
    expect(split(' \n ').errors).toEqual(['payload is empty']);
  });
});

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
    });
  });

  it('reports an unknown family and a payload of the wrong type instead of throwing', () => {
    expect(parsePayload('llrp' as never, '{}').errors).toEqual(['unknown reader family "llrp"']);
    expect(parsePayload('toString' as never, '{}').errors).toEqual(['unknown reader family "toString"']);
    expect(parsePayload('generic-json', 42 as never).errors).toEqual([
      'payload must be a Buffer or a string',
    ]);
  });

  it('caps the number of error messages', () => {
    const payload = `[${Array.from({ length: 500 }, () => '{"tag":"zz"}').join(',')}]`;
    const { errors } = parsePayload('generic-json', payload);
    expect(errors).toHaveLength(MAX_ERRORS + 1);
    expect(errors.at(-1)).toBe('400 further errors not shown');
  });
});
