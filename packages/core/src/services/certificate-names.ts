import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { ManagedCertificate } from '../domain/certificate.js';
import type { SubjectAltName } from '../pki/extensions.js';
import { assertCertificateNames } from '../pki/name-lint.js';

/**
 * The names of a certificate: how a record's strings become SANs, and the one rule every name
 * passes at certificate creation and again right before a CA signs (docs/api/lifecycle.md,
 * "Names"):
 *
 * - DNS names per RFC 1034 / RFC 5890 (IDNA; U-labels are signed as A-labels), a wildcard only
 *   as the whole leftmost label and never directly on a public suffix, no control, invisible or
 *   bidirectional characters (see pki/name-lint.ts);
 * - the common name must be one of the SANs; when it is not, it is ADDED to them (as a DNS name
 *   or an IP address) and linted as one, so a common name that is not a valid host name (a
 *   person's name, text with spaces) is refused. A common name equal to an email or URI SAN
 *   counts as present.
 */

/** How one SAN string of a record is read: an IP, a URI, an email address, else a DNS name. */
export function sanOf(raw: string): SubjectAltName {
  const v = raw.trim();
  if (isIP(v)) return { type: 'ip', value: v };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) return { type: 'uri', value: v };
  if (v.includes('@')) return { type: 'email', value: v };
  return { type: 'dns', value: v.toLowerCase() };
}

export const sanKey = (s: { type: string; value?: string }): string =>
  `${s.type}:${(s.value ?? '').toLowerCase()}`;

const HOST_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** The names a certificate record asks for, as SANs; the common name is included when it is a host name. */
export function subjectAltNamesOf(
  certificate: Pick<ManagedCertificate, 'common_name' | 'sans'>,
): SubjectAltName[] {
  const out: SubjectAltName[] = [];
  const seen = new Set<string>();
  const add = (value: string) => {
    if (!value.trim()) return;
    const san = sanOf(value);
    if (seen.has(sanKey(san))) return;
    seen.add(sanKey(san));
    out.push(san);
  };
  const cn = certificate.common_name.trim();
  if (isIP(cn) || HOST_NAME.test(cn)) add(cn);
  for (const s of certificate.sans) add(s);
  return out;
}

export interface NameRules {
  /** Whether iPAddress SANs are allowed. */
  allowIp: boolean;
}

/**
 * Lints a common name and SANs under the rule above; throws `name_rejected` naming every bad
 * field. Returns the SANs to sign: de-duplicated, DNS names in A-label form, the common name
 * added when it was missing.
 */
export function namesToSign(
  commonName: string | null,
  sans: readonly SubjectAltName[],
  rules: NameRules = { allowIp: true },
): SubjectAltName[] {
  const cn = commonName?.trim() || null;
  const cnIsOtherSan =
    cn !== null && sans.some((s) => (s.type === 'email' || s.type === 'uri') && s.value === cn);
  const linted = assertCertificateNames({
    commonName: cnIsOtherSan ? null : cn,
    sans,
    allowIp: rules.allowIp,
    commonNameRule: 'add',
  });
  const out: SubjectAltName[] = [];
  const seen = new Set<string>();
  for (const san of linted) {
    const value =
      san.type === 'dns' ? (/^[\x20-\x7e]*$/.test(san.value) ? san.value : aLabels(san.value)) : san.value;
    const next = { ...san, value: san.type === 'dns' ? value.toLowerCase() : value } as SubjectAltName;
    if (seen.has(sanKey(next))) continue;
    seen.add(sanKey(next));
    out.push(next);
  }
  return out;
}

/** A-label form of a linted DNS name; the wildcard label is kept as it is. */
function aLabels(name: string): string {
  const wildcard = name.startsWith('*.');
  const ascii = domainToASCII(wildcard ? name.slice(2) : name);
  return wildcard ? `*.${ascii}` : ascii;
}

/** Creation-time check of a record's names (common_name and the sans strings). */
export function assertRecordNames(commonName: string, sans: readonly string[]): void {
  namesToSign(commonName, sans.map(sanOf));
}
