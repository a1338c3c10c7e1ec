import ipaddr from 'ipaddr.js';
import { fail } from '../errors.js';
import { type AddressCategory, canonicalAddress, classifyAddress } from '../net/address-ranges.js';

/** Addresses one scan target may cover in all: a /20 of IPv4 (4096 addresses). */
export const MAX_TARGET_ADDRESSES = 4096;

/**
 * Categories a scan target may never name, whoever created it: the scanner reaches private
 * networks on purpose, but metadata services, link-local and loopback are this machine's or
 * its cloud's, not the network's. Loopback is admitted only with the test-only opt-in.
 */
const REFUSED: ReadonlySet<AddressCategory> = new Set([
  'metadata',
  'link_local',
  'loopback',
  'unspecified',
  'multicast',
  'broadcast',
]);

export interface ScanAddressPolicy {
  /** Test rigs scanning servers on 127.0.0.0/8 (never set by configuration). */
  allowLoopback?: boolean;
}

/** Why an address is refused as a scan destination, or null when it may be scanned. */
export function refusedCategory(address: string, policy: ScanAddressPolicy = {}): AddressCategory | null {
  const parsed = ipaddr.isValid(address) ? ipaddr.parse(address) : undefined;
  if (!parsed) return 'reserved';
  const cls = classifyAddress(parsed);
  if (cls.category === 'loopback' && policy.allowLoopback) return null;
  return REFUSED.has(cls.category) ? cls.category : null;
}

/** `localhost` and names below it, which resolve to loopback wherever they are asked (RFC 6761 §6.3). */
export function isLocalhostName(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'localhost' || lower.endsWith('.localhost');
}

export interface ParsedRange {
  /** Canonical `address/prefix` (host bits cleared), or the address for a single host. */
  text: string;
  size: number;
  first: ipaddr.IPv4 | ipaddr.IPv6;
  prefix: number;
}

/**
 * Parses one CIDR range or address. IPv4 must be a dotted quad. Ranges larger than
 * {@link MAX_TARGET_ADDRESSES} and ranges whose network lies in a refused category are
 * `invalid_input` naming `field`.
 */
export function parseRange(text: string, field: string, policy: ScanAddressPolicy = {}): ParsedRange {
  const bad = (message: string) =>
    fail('invalid_input', `${field}: ${message}`, { fields: [{ field, message }] });
  const trimmed = text.trim();
  const [addr, prefixText, extra] = trimmed.split('/');
  if (extra !== undefined || !addr) throw bad(`'${text.slice(0, 64)}' is not a CIDR range or an IP address`);
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(addr)) ip = ipaddr.IPv4.parse(addr);
  else if (addr.includes(':') && ipaddr.IPv6.isValid(addr)) ip = ipaddr.IPv6.parse(addr);
  else throw bad(`'${text.slice(0, 64)}' is not a CIDR range or an IP address (IPv4 as a dotted quad)`);
  const bits = ip.kind() === 'ipv4' ? 32 : 128;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
      throw bad(`'${text.slice(0, 64)}' has a prefix length outside 0–${bits}`);
    }
    prefix = Number(prefixText);
  }
  const hostBits = bits - prefix;
  if (hostBits > 12) {
    throw bad(
      `'${text.slice(0, 64)}' covers 2^${hostBits} addresses; a scan target covers at most ${MAX_TARGET_ADDRESSES} (an IPv4 /20)`,
    );
  }
  const first = networkOf(ip, prefix);
  const refused = refusedCategory(canonicalAddress(first), policy);
  if (refused) {
    throw bad(`'${text.slice(0, 64)}' lies in ${refused.replace('_', '-')} space, which is never scanned`);
  }
  const canonical = canonicalAddress(first);
  return { text: prefix === bits ? canonical : `${canonical}/${prefix}`, size: 2 ** hostBits, first, prefix };
}

function networkOf(ip: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = ip.toByteArray();
  for (let bit = prefix; bit < bytes.length * 8; bit++) {
    bytes[bit >> 3]! &= ~(0x80 >> (bit & 7)) & 0xff;
  }
  return ipaddr.fromByteArray(bytes);
}

/** Every address of a parsed range, in order (network and broadcast included: hosts may use them on /31, /32). */
export function* addressesOf(range: ParsedRange): Generator<string> {
  const base = range.first.toByteArray();
  for (let i = 0; i < range.size; i++) {
    const bytes = [...base];
    let carry = i;
    for (let j = bytes.length - 1; j >= 0 && carry > 0; j--) {
      const sum = bytes[j]! + (carry & 0xff);
      bytes[j] = sum & 0xff;
      carry = (carry >> 8) + (sum >> 8);
    }
    yield canonicalAddress(ipaddr.fromByteArray(bytes));
  }
}
