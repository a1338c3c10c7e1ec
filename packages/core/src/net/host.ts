import { fail } from '../errors.js';
import { canonicalAddress, type IpAddress, parseAddress } from './address-ranges.js';

/** A destination host after normalization: an address literal, or a DNS name to resolve. */
export type NormalizedHost =
  | { kind: 'ip'; address: IpAddress; text: string }
  | { kind: 'name'; name: string };

const MAX_HOST_LENGTH = 253;
/** Characters that would make the host text mean something else inside a URL. */
const URL_DELIMITERS = new Set(['/', '\\', '?', '#', '@', '%', ':', '[', ']']);

const hasDelimiterOrControl = (text: string): boolean =>
  [...text].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f || URL_DELIMITERS.has(c));

function invalid(host: string, field: string): never {
  const message = `'${host.slice(0, 100)}' is not a valid host name or IP address`;
  throw fail('invalid_input', message, { fields: [{ field, message }] });
}

/**
 * Normalizes a host the way a connection would read it, so the guard judges what is really
 * reached: brackets and IPv6 zone ids removed, IPv4 written in any form URLs accept — decimal
 * (`2130706433`), octal (`017700000001`), hex (`0x7f.1`), short (`127.1`), trailing dot — turned
 * into a dotted quad by the WHATWG URL host parser, names lower-cased (IDNA to punycode) and
 * stripped of their trailing dot.
 */
export function normalizeHost(host: string, field = 'host'): NormalizedHost {
  if (host.length === 0 || host.length > MAX_HOST_LENGTH + 2) invalid(host, field);
  const bracketed = host.startsWith('[') && host.endsWith(']');
  const text = bracketed ? host.slice(1, -1) : host;
  if (bracketed || text.includes(':')) {
    // IPv6; a zone id (`%eth0`, `%25eth0` in URLs) names an interface, not another address.
    const address = parseAddress(text.split('%')[0]!);
    if (address?.kind() !== 'ipv6') invalid(host, field);
    return { kind: 'ip', address, text: canonicalAddress(address) };
  }
  if (hasDelimiterOrControl(text)) invalid(host, field);
  let hostname: string;
  try {
    hostname = new URL(`http://${text}/`).hostname;
  } catch {
    invalid(host, field);
  }
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  if (hostname.split('.').some((label) => label.length === 0 || label.length > 63)) invalid(host, field);
  const address = parseAddress(hostname);
  if (address) return { kind: 'ip', address, text: canonicalAddress(address) };
  return { kind: 'name', name: hostname };
}
