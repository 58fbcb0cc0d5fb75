import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Collector } from './collector.js';
import { jsonErrorAt, scanSegments, splitJsonValues } from './json-framing.js';

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
