import ipaddr from 'ipaddr.js';
import { type AddressCategory, classifyAddress } from '../../net/address-ranges.js';
import type { AddressAllowlist } from '../../net/allowlist.js';

/**
 * Categories a webhook delivery refuses whatever the allowlist says (the address guard's policy,
 * docs/operations/outbound-connections.md): an allowlist entry lying wholly inside one of them
 * would be stored and then refuse every delivery it was meant to admit.
 */
const NEVER_DELIVERED: ReadonlySet<AddressCategory> = new Set([
  'documentation',
  'benchmarking',
  'reserved',
  'link_local',
  'metadata',
  'unspecified',
  'multicast',
  'broadcast',
]);

/**
 * The first entry of `allowlist` that admits no address a webhook could ever reach, with the
 * category it lies in; undefined when every entry can admit something. An entry lies wholly
 * inside a category when its first and last address do (special-purpose ranges are CIDR blocks,
 * and so is the entry).
 */
export function undeliverableEntry(
  allowlist: AddressAllowlist,
): { entry: string; category: AddressCategory } | undefined {
  for (const entry of allowlist.entries) {
    const first = ipaddr.parse(entry.split('/')[0]!);
    const last =
      first.kind() === 'ipv4'
        ? ipaddr.IPv4.broadcastAddressFromCIDR(entry)
        : ipaddr.IPv6.broadcastAddressFromCIDR(entry);
    const category = classifyAddress(first).category;
    if (NEVER_DELIVERED.has(category) && classifyAddress(last).category === category)
      return { entry, category };
  }
  return undefined;
}
