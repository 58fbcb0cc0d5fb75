import fc from 'fast-check';
import { generate, type IPublishPacket, parser } from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import { readWithoutSlices } from './parser-reads.js';

type Parser = ReturnType<typeof parser>;
type List = Record<'readUInt8' | 'readUInt16BE' | 'readUInt32BE', (offset?: number) => number> & {
  append(buf: Buffer): void;
  toString(encoding?: BufferEncoding, start?: number, end?: number): string;
};
const listOf = (p: Parser) => (p as unknown as { _list: List })._list;

/** A parser as aedes makes it, with reads without slices when `direct`. */
function makeParser(direct: boolean): Parser {
  const p = parser();
  if (direct) readWithoutSlices({ _parser: p });
  return p;
}

/** `bytes` cut at `cuts` (offsets, any order), as a socket may hand them over. */
function chunks(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out.filter((c) => c.length > 0);
}

/** The result of `f`, or the class and message of what it threw. */
function outcome(f: () => unknown): unknown {
  try {
    return { value: f() };
  } catch (err) {
    return { threw: (err as Error).constructor.name, message: (err as Error).message };
  }
}

describe('the MQTT parser reading without slices', () => {
  it("answers every read as bl's own methods do, within a buffer, across buffers and out of range", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        // Whole offsets only: bl reads a fractional one out of uninitialised memory.
        fc.array(fc.integer({ min: -3, max: 45 }), { minLength: 1, maxLength: 8 }),
        (data, cuts, offsets) => {
          const bytes = Buffer.from(data);
          const plain = listOf(makeParser(false));
          const direct = listOf(makeParser(true));
          for (const chunk of chunks(bytes, cuts)) {
            plain.append(chunk);
            direct.append(chunk);
          }
          for (const o of offsets) {
            for (const m of ['readUInt8', 'readUInt16BE', 'readUInt32BE'] as const) {
              expect(outcome(() => direct[m](o))).toEqual(outcome(() => plain[m](o)));
            }
            for (const end of [o, o + 1, o + 3, o + 7, undefined]) {
              expect(outcome(() => direct.toString('utf8', o, end))).toEqual(
                outcome(() => plain.toString('utf8', o, end)),
              );
            }
          }
          expect(outcome(() => direct.readUInt8())).toEqual(outcome(() => plain.readUInt8()));
          expect(outcome(() => direct.toString())).toEqual(outcome(() => plain.toString()));
        },
      ),
    );
  });

  it('parses PUBLISH packets cut anywhere as the parser does on its own', () => {
    const publish = fc.record({
      topic: fc.string({ minLength: 1, maxLength: 30 }),
      payload: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
      qos: fc.constantFrom(0, 1, 2),
      messageId: fc.integer({ min: 1, max: 65535 }),
      retain: fc.boolean(),
      dup: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(publish, { minLength: 1, maxLength: 5 }), fc.array(fc.nat()), (packets, cuts) => {
        const bytes = Buffer.concat(
          packets.map((p) => generate({ cmd: 'publish', ...p, qos: p.qos as 0 | 1 | 2 } as IPublishPacket)),
        );
        const parsed = (direct: boolean) => {
          const p = makeParser(direct);
          const out: unknown[] = [];
          p.on('packet', (packet) => out.push({ ...packet }));
          p.on('error', (err) => out.push({ error: err.message }));
          for (const chunk of chunks(bytes, cuts)) p.parse(chunk);
          return out;
        };
        const direct = parsed(true);
        expect(direct).toHaveLength(packets.length);
        expect(direct).toEqual(parsed(false));
      }),
    );
  });

  it('refuses a parser whose buffer list is not the one it knows', () => {
    expect(() => readWithoutSlices({ _parser: { _list: {} } })).toThrow(/MQTT parser has changed/);
    expect(() => readWithoutSlices({})).toThrow(/MQTT parser has changed/);
  });
});
