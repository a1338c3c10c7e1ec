import type { IpAddress } from '@certwright/core/net';

/**
 * The reverse-mapping name of an address (`4.3.2.1.in-addr.arpa`, nibbles under `ip6.arpa`):
 * the SNI a tls-alpn-01 validation of an IP identifier sends (RFC 8738 §6).
 */
export function reverseDnsName(address: IpAddress): string {
  const bytes = address.toByteArray();
  if (address.kind() === 'ipv4') return `${bytes.reverse().join('.')}.in-addr.arpa`;
  const nibbles: string[] = [];
  for (const byte of bytes) nibbles.push((byte >> 4).toString(16), (byte & 0xf).toString(16));
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}
