import { isIP } from 'node:net';
import { fail } from '../errors.js';
import { implicitConstructed, sequence, tlv } from './der.js';
import type { RawExtension } from './extensions.js';
import { ipToBytes } from './ip.js';
import { OID } from './oids.js';

/**
 * The nameConstraints extension (RFC 5280 §4.2.1.10) for a CA certificate: names its
 * subordinate certificates may (permitted) or may not (excluded) carry.
 *
 * - `dns`: a host name (`localhost`, `example.com`) covers itself and every name below it;
 *   a leading dot (`.example.com`) covers only the names below it.
 * - `ip`: an address range in CIDR form (`127.0.0.1/32`, `::1/128`, `10.0.0.0/8`).
 */
export type NameConstraint = { type: 'dns'; value: string } | { type: 'ip'; value: string };

export interface NameConstraints {
  permitted?: readonly NameConstraint[];
  excluded?: readonly NameConstraint[];
}

const DNS_CONSTRAINT = /^\.?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The extnValue of nameConstraints. Refuses an empty constraint set and malformed names. */
export function nameConstraintsValue(constraints: NameConstraints): Buffer {
  const permitted = constraints.permitted ?? [];
  const excluded = constraints.excluded ?? [];
  if (permitted.length === 0 && excluded.length === 0) {
    // RFC 5280: "Conforming CAs MUST NOT issue certificates where name constraints is an empty sequence."
    throw fail('invalid_input', 'name constraints need at least one permitted or excluded name', {
      fields: [{ field: 'name_constraints', message: 'empty' }],
    });
  }
  // GeneralSubtree ::= SEQUENCE { base GeneralName, minimum [0] DEFAULT 0, maximum [1] OPTIONAL }:
  // RFC 5280 says minimum MUST be zero and maximum MUST be absent, so only base is written.
  const subtrees = (list: readonly NameConstraint[]) => list.map((c) => sequence(generalName(c)));
  const parts: Buffer[] = [];
  if (permitted.length > 0) parts.push(implicitConstructed(0, ...subtrees(permitted)));
  if (excluded.length > 0) parts.push(implicitConstructed(1, ...subtrees(excluded)));
  return sequence(...parts);
}

/**
 * The extension itself, critical by default: RFC 5280 §4.2.1.10 says conforming CAs MUST mark
 * it critical, so that a relying party that cannot enforce it refuses the chain.
 */
export function nameConstraintsExtension(constraints: NameConstraints, critical = true): RawExtension {
  return { oid: OID.nameConstraints, critical, value: nameConstraintsValue(constraints) };
}

function generalName(constraint: NameConstraint): Buffer {
  switch (constraint.type) {
    case 'dns': {
      const name = constraint.value.toLowerCase();
      if (name.length > 253 || !DNS_CONSTRAINT.test(name)) throw bad(constraint.value, 'not a DNS name');
      return tlv(0x82, Buffer.from(name, 'latin1'));
    }
    case 'ip': {
      // iPAddress [7]: the address followed by its mask, 8 bytes for IPv4 and 32 for IPv6.
      const match = /^([^/]+)\/(\d{1,3})$/.exec(constraint.value);
      if (!match || isIP(match[1]!) === 0) {
        throw bad(constraint.value, 'not an address range such as 127.0.0.1/32');
      }
      const address = ipToBytes(match[1]!);
      const prefix = Number(match[2]);
      if (prefix > address.length * 8) throw bad(constraint.value, 'prefix longer than the address');
      const mask = Buffer.alloc(address.length);
      for (let bit = 0; bit < prefix; bit++) mask[bit >> 3] = mask[bit >> 3]! | (0x80 >> (bit & 7));
      for (let i = 0; i < address.length; i++) address[i] = address[i]! & mask[i]!;
      return tlv(0x87, Buffer.concat([address, mask]));
    }
    default:
      throw bad(String((constraint as { value?: unknown }).value), 'unknown type (use dns or ip)');
  }
}

const bad = (value: string, message: string) =>
  fail('invalid_input', `name constraint '${value}': ${message}`, {
    fields: [{ field: 'name_constraints', message: `'${value}': ${message}` }],
  });
