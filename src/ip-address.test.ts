import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ipv4OfGroups, ipv6Groups, mappedIPv4 } from './ip-address.js';

describe('IPv6 groups', () => {
  it('reads the written forms of one address alike', () => {
    const groups = [0x2002, 0x7f00, 0x1, 0, 0, 0, 0, 0x1];
    for (const text of [
      '2002:7f00:1::1',
      '2002:7F00:0001:0:0:0:0:1',
      '2002:7f00:1:0::0:1',
      '2002:7f00:1::0.0.0.1',
    ]) {
      expect(ipv6Groups(text), text).toEqual(groups);
    }
    expect(ipv6Groups('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Groups('::ffff:0:10.1.2.3')).toEqual([0, 0, 0, 0, 0xffff, 0, 0x0a01, 0x0203]);
    expect(ipv6Groups('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
  });

  it('is null for what is not an IPv6 address', () => {
    for (const text of [
      '',
      '1.2.3.4',
      '1::2::3',
      '1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:8:9',
      '::12345',
      '::1.2.3.256',
      'g::1',
    ]) {
      expect(ipv6Groups(text), text).toBeNull();
    }
  });

  it('agrees with the URL parser on every address, however it is compressed', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map((g) => g.toString(16)).join(':');
        const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        expect(ipv6Groups(full)).toEqual(groups);
        expect(ipv6Groups(compressed)).toEqual(groups);
      }),
    );
  });

  it('writes two groups as an IPv4 address; mapped addresses give theirs', () => {
    expect(ipv4OfGroups(0xc0a8, 0x0101)).toBe('192.168.1.1');
    expect(mappedIPv4('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(mappedIPv4('::ffff:0:10.0.0.1')).toBeNull();
  });
});
