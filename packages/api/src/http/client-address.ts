import { isIPv4, isIPv6 } from 'node:net';
import type { RequestHead, TransportContext } from '@certwright/core';
import { type AddressAllowlist, parseAddress } from '@certwright/core/net';

/**
 * Who a request comes from, for per-client rate limits and the failed-key throttle. The
 * default trusts only the socket: `TransportContext.remoteAddress`. Behind a reverse proxy
 * every client then shares the proxy's address; resolving the client from `Forwarded` /
 * `X-Forwarded-For` for configured trusted proxies belongs here, and only here.
 */
export type ClientAddressResolver = (request: RequestHead, transport: TransportContext) => string;

export const socketClientAddress: ClientAddressResolver = (_request, transport) => transport.remoteAddress;

/**
 * `SVC_TRUSTED_PROXIES`: when the socket peer is one of `proxies`, the client is the rightmost
 * `X-Forwarded-For` address that is not itself a trusted proxy (each proxy appends the peer it
 * saw, so entries left of an untrusted hop may be forged). Otherwise, and for any malformed
 * entry, the socket address stands: a client cannot choose its own address by sending the
 * header. Used for rate limits, audit, session and pre-login binding.
 */
export function trustedProxyClientAddress(proxies: AddressAllowlist): ClientAddressResolver {
  const trusted = (text: string) => {
    const address = parseAddress(text.trim().replace(/^\[|\]$/g, ''));
    return address !== undefined && proxies.contains(address);
  };
  return (request, transport) => {
    const peer = transport.remoteAddress;
    if (!trusted(peer)) return peer;
    const header = request.headers.get('x-forwarded-for');
    if (!header || header.length > 4096) return peer;
    const hops = header.split(',').map((h) => h.trim());
    for (let i = hops.length - 1; i >= 0; i -= 1) {
      const hop = hops[i] as string;
      if (parseAddress(hop.replace(/^\[|\]$/g, '')) === undefined) return peer;
      if (!trusted(hop)) return hop;
    }
    return peer;
  };
}

/**
 * The key one client's limits are counted under. IPv4 addresses (also IPv4-mapped IPv6) count
 * alone; IPv6 addresses count per /64, the smallest block a site is routinely given, so a
 * client cannot escape its limit by rotating addresses inside its own network.
 */
export function clientKey(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return bare === '' ? 'unknown' : `other:${bare.slice(0, 64)}`;
  const groups = expandIPv6(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** Eight 16-bit groups of a valid IPv6 address (`::` and a trailing dotted quad expanded). */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}
