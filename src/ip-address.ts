/**
 * The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, as a dual-stack
 * socket reports an IPv4 peer), or null for any other address: such a peer is an IPv4
 * client, for the rate limits and for the webhook address guard alike.
 */
export function mappedIPv4(address: string): string | null {
  return /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1] ?? null;
}

/**
 * The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 part
 * read as two groups), or null when `address` is not one. A zone (`%eth0`) is ignored.
 */
export function ipv6Groups(address: string): number[] | null {
  let text = address.replace(/%.*$/, '');
  const dotted = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const bytes = dotted.slice(2).map(Number);
    if (bytes.some((b) => b > 255)) return null;
    text = `${dotted[1]}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s === '' ? [] : s.split(':'));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}

/** The dotted IPv4 address of two 16-bit groups. */
export const ipv4OfGroups = (high: number, low: number): string =>
  `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
