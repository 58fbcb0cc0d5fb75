import { isIPv6 } from 'node:net';
import { mappedIPv4 } from '../../ip-address.js';

/**
 * The rate-limit bucket of a client address. An IPv6 client is limited by its /64: one
 * subscriber or site is given a whole /64 (RFC 6177 and common practice) and picks any of
 * its 2^64 addresses at will, so a bucket per address would not bound it at all. An IPv4
 * address seen as IPv4-mapped IPv6 (`::ffff:192.0.2.1`, a dual-stack listener) is the IPv4
 * address's bucket, whichever way it arrived.
 */
export function addressBucket(address: string): string {
  const ipv4 = mappedIPv4(address);
  if (ipv4 !== null) return `ip:${ipv4}`;
  if (!isIPv6(address)) return `ip:${address}`;
  return `ip6:${network64(address)}/64`;
}

/** The first four groups of an IPv6 address, without leading zeros: `2001:db8:0:1`. */
function network64(address: string): string {
  const bare = address.split('%')[0] as string; // a zone (fe80::1%eth0) names a link, not a network
  const [head = '', tail] = bare.split('::');
  const groups = (text: string) =>
    text === '' ? [] : text.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const first = groups(head);
  const full =
    tail === undefined
      ? first
      : [...first, ...Array(8 - first.length - groups(tail).length).fill('0'), ...groups(tail)];
  return full
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':');
}
