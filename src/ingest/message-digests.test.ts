import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageKey, payloadDigest } from './message-digests.js';

const reads = (times: Array<number | null>) => times.map((readerTime) => ({ readerTime }));

describe('payloadDigest', () => {
  it("is the first 16 bytes of the SHA-256 of the payload's bytes, a string's as UTF-8", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (payload) => {
        const expected = createHash('sha256').update(Buffer.from(payload, 'utf8')).digest().subarray(0, 16);
        expect(payloadDigest(payload).equals(expected)).toBe(true);
        expect(payloadDigest(Buffer.from(payload, 'utf8')).equals(expected)).toBe(true);
        expect(payloadDigest(payload).byteLength).toBe(16);
      }),
    );
  });
});

describe('messageKey', () => {
  it('is the payload digest and the earliest reader time, whatever the reads order', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.array(fc.integer({ min: 0, max: 253402300799999 }), { minLength: 1, maxLength: 50 }),
        (payload, times) => {
          const key = messageKey(payload, reads(times));
          expect(key.firstReadAt).toBe(Math.min(...times));
          expect(key.digest).toEqual(payloadDigest(payload));
          expect(messageKey(Buffer.from(payload), reads([...times].reverse()))).toEqual(key);
        },
      ),
    );
  });

  it('is only for messages whose reads all carry reader times', () => {
    expect(() => messageKey('{}', [])).toThrow(/has reads/);
    expect(() => messageKey('{}', reads([1000, null]))).toThrow(/reader times/);
  });
});
