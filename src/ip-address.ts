/**
 * The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, as a dual-stack
 * socket reports an IPv4 peer), or null for any other address: such a peer is an IPv4
 * client, for the rate limits and for the webhook address guard alike.
 */
export function mappedIPv4(address: string): string | null {
  return /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1] ?? null;
}
