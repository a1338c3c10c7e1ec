import ipaddr from 'ipaddr.js';

/**
 * What an IP address is, for the outbound address guard. The tables below are the whole
 * policy's vocabulary; docs/operations/outbound-connections.md lists them for operators.
 */
export type AddressCategory =
  /** Globally routable unicast. */
  | 'public'
  /** RFC 1918, RFC 6598 shared space (CGNAT), RFC 4193 unique local: admitted by an allowlist. */
  | 'private'
  | 'loopback'
  | 'link_local'
  /** A cloud provider's instance-metadata or host-agent endpoint: never admitted. */
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'benchmarking'
  | 'documentation';

export interface AddressClass {
  /** Canonical text of the address: dotted quad, or RFC 5952 for IPv6. */
  address: string;
  category: AddressCategory;
  /** The range that decided, e.g. `10.0.0.0/8 (RFC 1918)`. */
  range: string;
  /**
   * The IPv4 address the decision was taken on when `address` is an IPv6 address carrying
   * one (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo).
   */
  embeddedIPv4?: string;
  /**
   * The address a socket opens: the embedded IPv4 address for IPv4-mapped and IPv4-compatible
   * forms (they reach it anyway, and IPv6-less hosts cannot open them), `address` otherwise.
   */
  connectTo: string;
}

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

interface Range {
  net: [IpAddress, number];
  category: AddressCategory;
  label: string;
}

const range = (cidr: string, category: AddressCategory, source: string): Range => ({
  net: ipaddr.parseCIDR(cidr),
  category,
  label: `${cidr} (${source})`,
});

/**
 * Cloud metadata and host-agent addresses, checked before every other range (100.100.100.200
 * sits in shared space, fd00:ec2::254 in unique-local space: an allowlist for those ranges must
 * still not reach them).
 */
const METADATA: readonly Range[] = [
  range('169.254.169.254/32', 'metadata', 'instance metadata: AWS, GCP, Azure, OCI, OpenStack, DigitalOcean'),
  range('169.254.170.2/32', 'metadata', 'AWS ECS task metadata'),
  range('169.254.170.23/32', 'metadata', 'AWS EKS Pod Identity'),
  range('100.100.100.200/32', 'metadata', 'Alibaba Cloud metadata'),
  range('192.0.0.192/32', 'metadata', 'Oracle Cloud metadata'),
  range('168.63.129.16/32', 'metadata', 'Azure host agent (WireServer)'),
  range('fd00:ec2::254/128', 'metadata', 'AWS metadata over IPv6'),
  range('fd00:ec2::23/128', 'metadata', 'AWS EKS Pod Identity over IPv6'),
];

/** IPv4 special-purpose space (IANA registry, RFC 6890); anything else is public. */
const IPV4: readonly Range[] = [
  range('0.0.0.0/8', 'unspecified', 'RFC 1122 "this network"'),
  range('10.0.0.0/8', 'private', 'RFC 1918'),
  range('100.64.0.0/10', 'private', 'RFC 6598 shared address space'),
  range('127.0.0.0/8', 'loopback', 'RFC 1122'),
  range('169.254.0.0/16', 'link_local', 'RFC 3927'),
  range('172.16.0.0/12', 'private', 'RFC 1918'),
  range('192.0.0.0/24', 'reserved', 'RFC 6890 IETF protocol assignments'),
  range('192.0.2.0/24', 'documentation', 'RFC 5737 TEST-NET-1'),
  range('192.88.99.0/24', 'reserved', 'RFC 7526 6to4 relay anycast'),
  range('192.168.0.0/16', 'private', 'RFC 1918'),
  range('198.18.0.0/15', 'benchmarking', 'RFC 2544'),
  range('198.51.100.0/24', 'documentation', 'RFC 5737 TEST-NET-2'),
  range('203.0.113.0/24', 'documentation', 'RFC 5737 TEST-NET-3'),
  range('224.0.0.0/4', 'multicast', 'RFC 5771'),
  range('255.255.255.255/32', 'broadcast', 'RFC 919'),
  range('240.0.0.0/4', 'reserved', 'RFC 1112 future use'),
];

/** `::` and `::1`, judged before the IPv4-compatible embedding (`::/96`) that contains them. */
const IPV6_SELF: readonly Range[] = [
  range('::/128', 'unspecified', 'RFC 4291'),
  range('::1/128', 'loopback', 'RFC 4291'),
];

/** IPv6 special-purpose space; outside 2000::/3 everything not listed is reserved. */
const IPV6: readonly Range[] = [
  range('64:ff9b:1::/48', 'reserved', 'RFC 8215 local-use translation'),
  range('100::/64', 'reserved', 'RFC 6666 discard-only'),
  range('2001:2::/48', 'benchmarking', 'RFC 5180'),
  range('2001:10::/28', 'reserved', 'RFC 4843 ORCHID'),
  range('2001:20::/28', 'reserved', 'RFC 7343 ORCHIDv2'),
  range('2001:db8::/32', 'documentation', 'RFC 3849'),
  range('3fff::/20', 'documentation', 'RFC 9637'),
  range('fc00::/7', 'private', 'RFC 4193 unique local'),
  range('fe80::/10', 'link_local', 'RFC 4291'),
  range('fec0::/10', 'reserved', 'RFC 3879 deprecated site-local'),
  range('ff00::/8', 'multicast', 'RFC 4291'),
];

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * IPv6 forms that carry an IPv4 address; the IPv4 address is where packets end up (or what a
 * translator reaches), so it is what the guard judges.
 */
interface Embedding {
  net: [IpAddress, number];
  label: string;
  extract: (words: number[]) => number[];
  /** Whether a socket to this form reaches the IPv4 address itself (no translator between). */
  direct: boolean;
}

const last32 = (p: number[]): number[] => [p[6]!, p[7]!];

const EMBEDDING: readonly Embedding[] = [
  { net: ipaddr.parseCIDR('::ffff:0:0/96'), label: 'IPv4-mapped', extract: last32, direct: true },
  {
    net: ipaddr.parseCIDR('::ffff:0:0:0/96'),
    label: 'IPv4-translated (RFC 6145)',
    extract: last32,
    direct: false,
  },
  { net: ipaddr.parseCIDR('64:ff9b::/96'), label: 'NAT64 (RFC 6052)', extract: last32, direct: false },
  {
    net: ipaddr.parseCIDR('2002::/16'),
    label: '6to4 (RFC 3056)',
    extract: (p) => [p[1]!, p[2]!],
    direct: false,
  },
  // Teredo (RFC 4380): the client's IPv4 address is stored with every bit inverted.
  {
    net: ipaddr.parseCIDR('2001::/32'),
    label: 'Teredo (RFC 4380)',
    extract: (p) => [~p[6]! & 0xffff, ~p[7]! & 0xffff],
    direct: false,
  },
  // IPv4-compatible (RFC 4291 §2.5.5.1, deprecated); :: and ::1 are judged as IPv6 first.
  { net: ipaddr.parseCIDR('::/96'), label: 'IPv4-compatible', extract: last32, direct: true },
];

const v4FromWords = ([hi, lo]: number[]): ipaddr.IPv4 =>
  new ipaddr.IPv4([hi! >> 8, hi! & 0xff, lo! >> 8, lo! & 0xff]);

function firstMatch(address: IpAddress, ranges: readonly Range[]): Range | undefined {
  for (const r of ranges) {
    if (address.kind() === r.net[0].kind() && address.match(r.net)) return r;
  }
  return undefined;
}

/** Canonical text: dotted quad for IPv4, RFC 5952 for IPv6 (zone ids dropped). */
export const canonicalAddress = (address: IpAddress): string =>
  address.kind() === 'ipv4' ? address.toString() : (address as ipaddr.IPv6).toRFC5952String();

function classifyV4(address: ipaddr.IPv4): AddressClass {
  const hit = firstMatch(address, METADATA) ?? firstMatch(address, IPV4);
  const text = address.toString();
  return {
    address: text,
    category: hit?.category ?? 'public',
    range: hit?.label ?? 'public unicast',
    connectTo: text,
  };
}

/** Classifies one parsed address. Pure: no lookup, no I/O. */
export function classifyAddress(address: IpAddress): AddressClass {
  if (address.kind() === 'ipv4') return classifyV4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const text = v6.toRFC5952String();
  const metadata = firstMatch(v6, METADATA);
  if (metadata) return { address: text, category: 'metadata', range: metadata.label, connectTo: text };
  const own = firstMatch(v6, IPV6_SELF);
  if (own) return { address: text, category: own.category, range: own.label, connectTo: text };
  for (const embedding of EMBEDDING) {
    if (!v6.match(embedding.net)) continue;
    const inner = classifyV4(v4FromWords(embedding.extract(v6.parts)));
    return {
      address: text,
      category: inner.category,
      range: `${embedding.label} ${inner.address}: ${inner.range}`,
      embeddedIPv4: inner.address,
      connectTo: embedding.direct ? inner.address : text,
    };
  }
  const hit = firstMatch(v6, IPV6);
  if (hit) return { address: text, category: hit.category, range: hit.label, connectTo: text };
  if (!v6.match(GLOBAL_UNICAST_V6)) {
    return {
      address: text,
      category: 'reserved',
      range: 'outside 2000::/3 (RFC 4291 §2.4)',
      connectTo: text,
    };
  }
  return { address: text, category: 'public', range: 'public unicast', connectTo: text };
}

/** Parses an address text (dotted quad or IPv6, optional zone id); `undefined` when it is none. */
export function parseAddress(text: string): IpAddress | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}
