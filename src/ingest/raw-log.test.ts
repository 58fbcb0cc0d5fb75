import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES } from './adapters/index.js';
import { storablePayloads, storableText } from './raw-log.js';

/** Each payload on its own, as the raw log stored them before storablePayloads. */
const reference = (payloads: Array<Buffer | string>) => {
  const bodies = payloads.map((p) => Buffer.from(storableText(p), 'utf8'));
  return { all: Buffer.concat(bodies), lengths: bodies.map((b) => b.byteLength) };
};

const same = (payloads: Array<Buffer | string>) => {
  const got = storablePayloads(payloads);
  const want = reference(payloads);
  expect(got.lengths).toEqual(want.lengths);
  expect(got.all.equals(want.all)).toBe(true);
};

describe('storablePayloads', () => {
  it('stores what storableText makes of each payload, whatever the payloads', () => {
    // UTF-8 text, arbitrary bytes (NUL, stray continuation bytes, cut sequences), strings.
    const text = fc.string({
      unit: fc.constantFrom('a', '{', '"', 'é', '€', '𝄞', '\u0000', ' '),
      maxLength: 12,
    });
    const payload = fc.oneof(
      text.map((t) => Buffer.from(t, 'utf8')),
      fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)),
      // The halves of € and 𝄞: valid only when two payloads are taken as one.
      fc.constantFrom([0xe2], [0x82, 0xac], [0xf0, 0x9d], [0x84, 0x9e]).map((b) => Buffer.from(b)),
      text,
    );
    fc.assert(fc.property(fc.array(payload, { minLength: 1, maxLength: 6 }), same), { numRuns: 3000 });
  });

  it('takes a character split over two payloads as two invalid halves, not one valid character', () => {
    const euro = Buffer.from('€', 'utf8'); // e2 82 ac
    same([euro.subarray(0, 1), euro.subarray(1)]);
    same([Buffer.from('{"a":"x'), euro.subarray(0, 2), Buffer.concat([euro.subarray(2), Buffer.from('"}')])]);
  });

  it('cuts a payload over the size limit, and keeps NUL out', () => {
    same([Buffer.from('ok'), Buffer.alloc(MAX_PAYLOAD_BYTES + 10, 'x')]);
    same([Buffer.from('a\u0000b'), Buffer.from('c')]);
    same([Buffer.alloc(0), Buffer.from('{}')]);
  });
});

describe('storableText over the size limit', () => {
  const note = (text: string) => /\n\[truncated: (\d+) bytes in all, (\d+) kept\]$/.exec(text);

  it('counts UTF-8 bytes and never cuts a character in two', () => {
    // The limit falls inside a one-, two-, three- and four-byte character, given as bytes and as text.
    for (const char of ['x', 'é', '€', '𝄞']) {
      for (let lead = 0; lead < 4; lead++) {
        const text = 'a'.repeat(MAX_PAYLOAD_BYTES - 3 + lead) + char.repeat(4);
        for (const given of [text, Buffer.from(text, 'utf8')]) {
          const stored = storableText(given);
          const [, all, kept] = note(stored)!;
          expect(Number(all)).toBe(Buffer.byteLength(text));
          expect(Number(kept)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
          expect(Number(kept)).toBeGreaterThan(MAX_PAYLOAD_BYTES - Buffer.byteLength(char));
          const body = stored.slice(0, stored.lastIndexOf('\n['));
          expect(body).not.toContain('\uFFFD');
          expect(Buffer.byteLength(body)).toBe(Number(kept));
          expect(text.startsWith(body)).toBe(true);
        }
      }
    }
  });

  it('keeps the limit whole when the bytes there are not UTF-8 at all', () => {
    const bytes = Buffer.alloc(MAX_PAYLOAD_BYTES + 8, 0x80);
    expect(note(storableText(bytes))?.slice(1)).toEqual([
      String(MAX_PAYLOAD_BYTES + 8),
      String(MAX_PAYLOAD_BYTES),
    ]);
  });

  it('leaves a payload within the limit as it is, counted in bytes', () => {
    const text = 'é'.repeat(MAX_PAYLOAD_BYTES / 2);
    expect(storableText(text)).toBe(text);
    expect(note(storableText(`${text}é`))?.[2]).toBe(String(MAX_PAYLOAD_BYTES));
  });
});
