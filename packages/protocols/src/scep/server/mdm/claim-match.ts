import { isIP } from 'node:net';
import { bytesToIp, ipToBytes, type OtherGeneralName, type SubjectAltName } from '@certwright/core/pki';
import type { MdmChallengeNames } from './token.js';

/** What the claims are compared with: the CSR's subject and subjectAltName. */
export interface CsrNames {
  /** Every common name attribute of the subject (a well-formed request has at most one). */
  commonNames: readonly string[];
  subjectAltNames: readonly (SubjectAltName | OtherGeneralName)[];
}

/**
 * Why the CSR's names differ from the challenge's, or null when they are exactly the same: the
 * common name is compared as an exact string, the subjectAltName entries as sets (DNS names
 * and the domain of email addresses case-insensitively, IP addresses by value, URIs exactly).
 * A CSR naming something the challenge does not, or missing something it names, differs.
 */
export function claimMismatch(claims: MdmChallengeNames, csr: CsrNames): string | null {
  if (csr.commonNames.length > 1) return 'the CSR subject carries more than one common name';
  const cn = csr.commonNames[0] ?? null;
  if (cn !== claims.cn) {
    return claims.cn === null
      ? 'the CSR subject has a common name the challenge does not name'
      : 'the CSR common name is not the one the challenge names';
  }
  if (csr.subjectAltNames.some((n) => n.type === 'other')) {
    return 'the CSR subjectAltName holds a name type the challenge cannot name';
  }
  const want = new Set<string>();
  for (const type of ['dns', 'ip', 'email', 'uri'] as const) {
    for (const value of claims[type]) want.add(canonical(type, value));
  }
  const have = new Set((csr.subjectAltNames as SubjectAltName[]).map((n) => canonical(n.type, n.value)));
  for (const name of have) {
    if (!want.has(name)) return `the CSR names ${shown(name)}, which the challenge does not`;
  }
  for (const name of want) {
    if (!have.has(name)) return `the challenge names ${shown(name)}, which the CSR does not`;
  }
  return null;
}

function canonical(type: SubjectAltName['type'], value: string): string {
  switch (type) {
    case 'dns':
      return `dns:${value.toLowerCase()}`;
    case 'ip':
      // A claim that is not an IP address can match nothing the CSR carries.
      return isIP(value) ? `ip:${bytesToIp(ipToBytes(value))}` : `ip!:${value}`;
    case 'email': {
      const at = value.lastIndexOf('@');
      return `email:${at < 0 ? value : value.slice(0, at) + value.slice(at).toLowerCase()}`;
    }
    case 'uri':
      return `uri:${value}`;
  }
}

/** A name for a message: type and the first 64 characters. */
const shown = (key: string): string => {
  const sep = key.indexOf(':');
  const value = key.slice(sep + 1);
  return `${key.slice(0, sep).replace('!', '')} '${value.length > 64 ? `${value.slice(0, 64)}…` : value}'`;
};
