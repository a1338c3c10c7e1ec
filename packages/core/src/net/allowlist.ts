import ipaddr from 'ipaddr.js';
import { fail } from '../errors.js';
import { type IpAddress, parseAddress } from './address-ranges.js';

/**
 * The operator's list of private ranges an outbound connection may reach (webhook targets,
 * ACME validation of hosts on a private network). Parsed once; immutable.
 */
export interface AddressAllowlist {
  /** Canonical entries, `address/prefix`, in the order given. */
  readonly entries: readonly string[];
  /**
   * Entries lying wholly inside loopback (`127.0.0.0/8`, `::1`). They admit loopback only for a
   * guard created with `loopback: 'when-listed'`; a service that has such entries should warn
   * loudly at start-up.
   */
  readonly loopbackEntries: readonly string[];
  /** Whether some entry contains `address` (IPv4-mapped IPv6 is compared as its IPv4 address). */
  contains(address: IpAddress): boolean;
  /** Whether some loopback entry contains `address`. */
  containsLoopback(address: IpAddress): boolean;
  /** The entries joined by `, ` — the canonical setting text. */
  toString(): string;
}

type Cidr = [IpAddress, number];

const LOOPBACK_V4: Cidr = ipaddr.parseCIDR('127.0.0.0/8');

/** An IPv4-mapped IPv6 address or range is the IPv4 one it maps. */
function unmapped([address, prefix]: Cidr): Cidr {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), prefix - 96];
  }
  return [address, prefix];
}

function parseEntry(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  if (addressText.includes('%')) return undefined; // a zone id names an interface, not a range
  const address = parseAddress(addressText);
  if (!address) return undefined;
  const max = address.kind() === 'ipv4' ? 32 : 128;
  if (slash < 0) return unmapped([address, max]);
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > max) return undefined;
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addressText}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${addressText}/${prefix}`);
  return unmapped([network, prefix]);
}

const canonical = ([address, prefix]: Cidr): string =>
  `${address.kind() === 'ipv4' ? address.toString() : (address as ipaddr.IPv6).toRFC5952String()}/${prefix}`;

function isLoopbackOnly([address, prefix]: Cidr): boolean {
  if (address.kind() === 'ipv4') return prefix >= 8 && address.match(LOOPBACK_V4);
  return prefix === 128 && canonical([address, prefix]) === '::1/128';
}

function unmap(address: IpAddress): IpAddress {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

const within = (address: IpAddress, cidrs: readonly Cidr[]): boolean => {
  const a = unmap(address);
  return cidrs.some((c) => c[0].kind() === a.kind() && a.match(c));
};

/**
 * Parses an allowlist: CIDR ranges or single IP addresses (dotted-quad IPv4, IPv6), separated
 * by commas, whitespace around entries ignored, empty text meaning an empty list. Host bits of
 * a range are cleared (`10.1.2.3/8` is `10.0.0.0/8`). One bad entry refuses the whole setting
 * with an `invalid_input` error that names the entry and `name` (the setting or variable).
 */
export function parseAllowlist(text: string | readonly string[], name = 'allowlist'): AddressAllowlist {
  const pieces = (typeof text === 'string' ? text.split(',') : text).map((p) => p.trim()).filter(Boolean);
  const cidrs: Cidr[] = [];
  for (const piece of pieces) {
    const cidr = parseEntry(piece);
    if (!cidr) {
      const message = `'${piece.slice(0, 100)}' is not an IP address or CIDR range (e.g. 10.0.0.0/8, 192.168.1.20, fd00::/8)`;
      throw fail('invalid_input', `${name}: ${message}`, { fields: [{ field: name, message }] });
    }
    cidrs.push(cidr);
  }
  const loopback = cidrs.filter(isLoopbackOnly);
  const entries = Object.freeze(cidrs.map(canonical));
  return Object.freeze({
    entries,
    loopbackEntries: Object.freeze(loopback.map(canonical)),
    contains: (address: IpAddress) => within(address, cidrs),
    containsLoopback: (address: IpAddress) => within(address, loopback),
    toString: () => entries.join(', '),
  });
}

/** The empty allowlist: every private address refused. */
export const EMPTY_ALLOWLIST: AddressAllowlist = parseAllowlist('');
