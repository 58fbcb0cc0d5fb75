import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressBucket } from './address-bucket.js';

const group = fc.integer({ min: 0, max: 0xffff });
const address = fc.array(group, { minLength: 8, maxLength: 8 });
const plain = (g: number[]) => g.map((n) => n.toString(16)).join(':');
const padded = (g: number[]) => g.map((n) => n.toString(16).padStart(4, '0').toUpperCase()).join(':');
// The shortest form, as a URL parser writes it (RFC 5952): '::' for the longest run of zeros.
const compressed = (g: number[]) => new URL(`http://[${plain(g)}]/`).hostname.slice(1, -1);

describe('addressBucket', () => {
  it('keeps an IPv4 address, and takes an IPv4-mapped IPv6 address as its IPv4 one', () => {
    expect(addressBucket('192.0.2.7')).toBe('ip:192.0.2.7');
    expect(addressBucket('::ffff:192.0.2.7')).toBe('ip:192.0.2.7');
    expect(addressBucket('::FFFF:192.0.2.7')).toBe('ip:192.0.2.7');
  });

  it.each([
    ['2001:db8:0:1::1', 'ip6:2001:db8:0:1/64'],
    ['2001:db8::', 'ip6:2001:db8:0:0/64'],
    ['::1', 'ip6:0:0:0:0/64'],
    ['fe80::1%eth0', 'ip6:fe80:0:0:0/64'],
    ['64:ff9b::192.0.2.1', 'ip6:64:ff9b:0:0/64'],
    ['1:2:3:4:5:6:192.0.2.1', 'ip6:1:2:3:4/64'],
  ])('takes %s by its /64', (ip, bucket) => {
    expect(addressBucket(ip)).toBe(bucket);
  });

  it('gives every spelling of one IPv6 address, and every address of one /64, one bucket', () => {
    fc.assert(
      fc.property(address, address, (a, b) => {
        const bucket = addressBucket(plain(a));
        expect(addressBucket(padded(a))).toBe(bucket);
        expect(addressBucket(compressed(a))).toBe(bucket);
        const sameNetwork = [...a.slice(0, 4), ...b.slice(4)];
        expect(addressBucket(compressed(sameNetwork))).toBe(bucket);
        const otherNetwork = [...b.slice(0, 4), ...a.slice(4)];
        expect(addressBucket(compressed(otherNetwork)) === bucket).toBe(
          b.slice(0, 4).every((g, i) => g === a[i]),
        );
      }),
      { numRuns: 500 },
    );
  });
});
