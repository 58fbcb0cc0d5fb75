/**
 * The address guard's judgement of IPv6 forms that carry an IPv4 address: a form a host or
 * translator turns into a connection to that IPv4 address is refused when the IPv4 address
 * is; forms whose IPv4 address cannot be read reliably (Teredo) or that only a local
 * translator reaches (NAT64, SIIT, IPv4-compatible) are refused whatever they carry.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from './url-guard.js';

const hex = (n: number) => n.toString(16);
const dotted = (b: number[]) => b.join('.');
const high = (b: number[]) => hex((b[0]! << 8) | b[1]!);
const low = (b: number[]) => hex((b[2]! << 8) | b[3]!);

const ipv4Bytes = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });
/** IPv4 addresses weighted towards the special ranges, which plain random bytes rarely hit. */
const anyIPv4 = fc.oneof(
  ipv4Bytes,
  fc
    .tuple(fc.constantFrom([127], [10], [169, 254], [192, 168], [172, 16], [100, 64], [0], [224]), ipv4Bytes)
    .map(([head, rest]) => [...head, ...rest.slice(head.length)]),
);

/** The forms that reach the IPv4 address itself: refused exactly when it is. */
const sameAsIPv4 = (b: number[]) => [
  `::ffff:${dotted(b)}`,
  `::FFFF:${dotted(b)}`,
  `::ffff:${high(b)}:${low(b)}`,
  `0:0:0:0:0:ffff:${dotted(b)}`,
  `0:0:0:0:0:ffff:${high(b)}:${low(b)}`,
  `2002:${high(b)}:${low(b)}::1`,
  `2002:${high(b)}:${low(b)}:ffff:0:0:0:1`,
];

/** The forms refused whatever IPv4 address they carry. */
const alwaysRefused = (b: number[]) => [
  `::${dotted(b)}`,
  `::${high(b)}:${low(b)}`,
  `::ffff:0:${dotted(b)}`,
  `::ffff:0:${high(b)}:${low(b)}`,
  `64:ff9b::${dotted(b)}`,
  `64:ff9b::${high(b)}:${low(b)}`,
  `64:ff9b:1::${dotted(b)}`,
  `64:ff9b:1:abcd::${high(b)}:${low(b)}`,
  // Teredo: server address in bits 32-63, the client's obfuscated (xor 0xffff) in the last 32.
  `2001:0:${high(b)}:${low(b)}:8000:0:${hex(~((b[0]! << 8) | b[1]!) & 0xffff)}:${hex(~((b[2]! << 8) | b[3]!) & 0xffff)}`,
  `2001::${dotted(b)}`,
];

describe('IPv6 forms carrying an IPv4 address', () => {
  it('IPv4-mapped and 6to4 forms are judged by the IPv4 address they carry', () => {
    fc.assert(
      fc.property(anyIPv4, (b) => {
        const expected = isPrivateAddress(dotted(b));
        for (const a of sameAsIPv4(b)) expect(isPrivateAddress(a), `${a} (${dotted(b)})`).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('IPv4-compatible, SIIT, NAT64 and Teredo forms are refused whatever they carry', () => {
    fc.assert(
      fc.property(anyIPv4, (b) => {
        for (const a of alwaysRefused(b)) expect(isPrivateAddress(a), a).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('examples: private, loopback, link-local and metadata addresses inside each form', () => {
    for (const a of [
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      '2002:c0a8:101::1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '0:0:0:0:0:ffff:10.0.0.1',
      '::ffff:0:808:808',
      '64:ff9b::808:808',
      '64:ff9b:1::808:808',
      '2001:0:808:808::1',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['2002:808:808::1', '::ffff:808:808', '::ffff:8.8.8.8', '2001:4860:4860::8888']) {
      expect(isPrivateAddress(a), a).toBe(false);
    }
  });
});
