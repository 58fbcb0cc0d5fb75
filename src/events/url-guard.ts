import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ipv4OfGroups, ipv6Groups } from '../ip-address.js';

/**
 * Request forgery guard for webhook URLs (docs/events.md "Where deliveries may go"): only
 * https, and never an address of loopback, private, link-local or other special ranges,
 * unless the operator allows them (TAGTRAIL_WEBHOOK_ALLOW_PRIVATE, which also allows
 * http). The check runs when an endpoint is saved and again on every delivery, on the
 * addresses the name resolves to then: the connection goes to the checked address, so a
 * name that re-resolves to an internal address (DNS rebinding) gains nothing.
 */
const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
// Inside global unicast (2000::/3, the only IPv6 space on the internet; isPrivateAddress
// refuses the rest: unspecified, loopback, IPv4-compatible and -translated, NAT64, unique
// and link-local, site-local, multicast, the discard prefix, unallocated space).
for (const [net, prefix] of [
  ['2001:db8::', 32],
  // Teredo (RFC 4380): the IPv4 address of the server and of the client are inside, the
  // client's obfuscated; a host with a Teredo interface tunnels to them, private ones too.
  ['2001::', 32],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** Whether an IP address is outside the public internet (loopback, private, …). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, 'ipv4');
  if (family !== 6) return true;
  const groups = ipv6Groups(address);
  if (groups === null) return true;
  // IPv4-mapped, dotted or hexadecimal (::ffff:7f00:1): a dual-stack socket connects to the IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return forbidden.check(ipv4OfGroups(groups[6]!, groups[7]!), 'ipv4');
  }
  // Only global unicast (2000::/3) is on the internet. Outside it: 0000::/8 with the
  // IPv4-translated addresses (SIIT, RFC 2765: ::ffff:0:a.b.c.d, which a translator maps
  // onto any IPv4 address) and NAT64's prefixes, unique local, link-local, multicast and
  // space not allocated at all.
  if (groups[0]! < 0x2000 || groups[0]! > 0x3fff) return true;
  // 6to4 (RFC 3056, 2002:a.b.c.d::/48): a host with a 6to4 interface, or a relay, sends
  // it to the IPv4 address in bits 16-47; one of a private range reaches inside.
  if (groups[0] === 0x2002) return forbidden.check(ipv4OfGroups(groups[1]!, groups[2]!), 'ipv4');
  return forbidden.check(address, 'ipv6');
}

/** Why a URL may not be an endpoint, or null when it may. Does not resolve names. */
export function urlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash) return 'must not have a fragment';
  // A fully qualified name's final dot (`localhost.`) names the same host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (allowPrivate) return null;
  // An address literal is judged by its range alone: IPv6 ones have no dot, yet are not names.
  if (isIP(host)) return isPrivateAddress(host) ? 'must not point to a loopback or private address' : null;
  if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) {
    return 'must not point to a loopback or private address';
  }
  return null;
}

/** The addresses a name resolves to (a test gives its own). */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** How long saving an endpoint waits for its name to resolve. */
const SAVE_RESOLVE_MS = 5_000;

/**
 * urlProblem, and for a name, the addresses it resolves to now: one of them private is a
 * problem. A name that does not resolve (yet, or within SAVE_RESOLVE_MS) is accepted:
 * a receiver's name may be published after its endpoint is registered, and every
 * delivery checks the addresses again (resolveDeliveryAddress).
 */
export async function savedUrlProblem(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
  timeoutMs = SAVE_RESOLVE_MS,
): Promise<string | null> {
  const problem = urlProblem(raw, allowPrivate);
  if (problem || allowPrivate) return problem;
  const host = new URL(raw).hostname.replace(/\.+$/, '');
  if (isIP(host.replace(/^\[|\]$/g, ''))) return null;
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    resolve(host).catch(() => []),
    new Promise<string[]>((done) => {
      timer = setTimeout(() => done([]), timeoutMs);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
  const bad = addresses.find((a) => isPrivateAddress(a));
  return bad ? `must not point to a loopback or private address (${host} resolves to ${bad})` : null;
}

/**
 * The address a delivery connects to: the first the host resolves to, when every one of
 * them is allowed. Throws with the reason otherwise.
 */
export async function resolveDeliveryAddress(
  hostname: string,
  allowPrivate: boolean,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const found = isIP(host)
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : (await lookup(host, { all: true, verbatim: true })).map((a) => ({
        address: a.address,
        family: a.family as 4 | 6,
      }));
  if (found.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate) {
    const bad = found.find((a) => isPrivateAddress(a.address));
    if (bad) throw new Error(`${host} resolves to ${bad.address}, a loopback or private address`);
  }
  return found[0]!;
}
