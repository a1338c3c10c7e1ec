import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { parse as parseDomain } from 'tldts';
import { type CertwrightError, fail } from '../errors.js';
import type { SubjectAltName } from './extensions.js';

/**
 * Lint of the names a certificate is about to carry, before anything is signed: DNS names per
 * RFC 1034 §3.5 / RFC 5890–5891 (IDNA), wildcards, IP addresses, control and bidi characters,
 * and the common name's relation to the SANs. A pure function: it returns every problem it
 * finds; `assertCertificateNames` turns them into one `name_rejected` error. See docs/pki.md.
 */

export type NameProblemCode =
  /** Empty, or a DNS name that breaks RFC 1034 syntax (empty label, trailing dot, not LDH, `ab--`). */
  | 'syntax'
  /** A label over 63 octets or a name over 253 octets (in A-label form). */
  | 'too_long'
  /** An A-label (`xn--…`) that does not decode, or a U-label IDNA 2008 / UTS #46 refuses. */
  | 'idna'
  /** One label mixing Latin, Cyrillic and Greek letters: the homograph pattern (`аpple`). */
  | 'mixed_script'
  /** `*` anywhere but as the whole leftmost label, or a bare `*`. */
  | 'wildcard_position'
  /** A wildcard directly on a public suffix (`*.com`, `*.co.uk`, `*.github.io`). */
  | 'wildcard_public_suffix'
  /** The name is itself a public suffix (`com`, `co.uk`). */
  | 'public_suffix'
  /** An IP address where the rules allow none, or an IPv4 address written as a DNS name. */
  | 'ip_not_allowed'
  /** Not an IP address. */
  | 'ip_invalid'
  /** NUL, C0/C1 control characters, DEL, or invisible format characters (zero-width). */
  | 'control_character'
  /** Bidirectional controls (RLO, LRE, isolates …) that can reorder what a reader sees. */
  | 'bidi_control'
  /** The common name is not one of the SANs (with `commonNameRule: 'refuse'`). */
  | 'cn_not_in_sans';

export interface NameProblem {
  /** `common_name` or `sans.<index>`. */
  field: string;
  name: string;
  code: NameProblemCode;
  message: string;
}

export interface NameLintInput {
  commonName?: string | null;
  sans: readonly SubjectAltName[];
  /** Whether iPAddress SANs (and an IP as common name) are allowed; default false. */
  allowIp?: boolean;
  /**
   * A common name that is not among the SANs: `refuse` (a problem, the default) or `add` (it
   * is appended to the SANs, as a DNS name or an IP, and linted as one).
   */
  commonNameRule?: 'refuse' | 'add';
}

export interface NameLintResult {
  problems: NameProblem[];
  /** The SANs to put on the certificate: the input's, plus the common name under `add`. */
  sans: SubjectAltName[];
}

// C0 controls, DEL, C1 controls, and invisible format characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM, soft hyphen).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200d\u2060\ufeff]/u;
// LRM, RLM, ALM, embeddings and overrides (LRE … RLO), isolates (LRI … PDI).
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4_LIKE = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const SCRIPTS: [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
];

/** Whether `name` is exactly a suffix of the Public Suffix List (ICANN or private section). */
function isPublicSuffix(name: string): boolean {
  const parsed = parseDomain(name, { allowPrivateDomains: true, extractHostname: false });
  return parsed.publicSuffix === name && (parsed.isIcann === true || parsed.isPrivate === true);
}

function characterProblem(value: string): [NameProblemCode, string] | null {
  if (BIDI.test(value)) return ['bidi_control', 'contains a bidirectional control character'];
  if (CONTROL.test(value)) return ['control_character', 'contains a control or invisible character'];
  return null;
}

/** Problems of one DNS name (as it would go into a dNSName SAN). */
function dnsProblems(name: string): [NameProblemCode, string][] {
  const chars = characterProblem(name);
  if (chars) return [chars];
  if (name === '') return [['syntax', 'is empty']];
  if (IPV4_LIKE.test(name)) return [['ip_not_allowed', 'is an IPv4 address written as a DNS name']];
  if (name.startsWith('.') || name.endsWith('.') || name.includes('..'))
    return [['syntax', 'has an empty label']];
  const labels = name.split('.');
  const wildcard = labels[0] === '*';
  if (name.includes('*') && (!wildcard || labels.slice(1).some((l) => l.includes('*')))) {
    return [['wildcard_position', 'may hold "*" only as the whole leftmost label']];
  }
  if (wildcard && labels.length === 1) return [['wildcard_position', 'is a bare wildcard']];
  const out: [NameProblemCode, string][] = [];
  const aLabels: string[] = [];
  for (const label of wildcard ? labels.slice(1) : labels) {
    const ascii = /^[\x20-\x7e]*$/.test(label) ? label.toLowerCase() : domainToASCII(label);
    if (ascii === '') {
      out.push(['idna', `label '${label.slice(0, 63)}' is not a valid internationalized label`]);
      continue;
    }
    if (ascii.startsWith('xn--')) {
      const unicode = domainToUnicode(ascii);
      if (unicode === '' || unicode === ascii || domainToASCII(unicode) !== ascii) {
        out.push(['idna', `label '${ascii}' is not a valid A-label`]);
        continue;
      }
      const scripts = SCRIPTS.filter(([, re]) => [...unicode].some((c) => re.test(c))).map(([s]) => s);
      if (scripts.length > 1)
        out.push(['mixed_script', `label '${unicode}' mixes ${scripts.join(' and ')} letters`]);
    }
    if (ascii.length > 63) out.push(['too_long', `label '${ascii.slice(0, 20)}…' is longer than 63 octets`]);
    else if (!LDH_LABEL.test(ascii))
      out.push(['syntax', `label '${ascii}' is not letters, digits and hyphens`]);
    else if (ascii[2] === '-' && ascii[3] === '-' && !ascii.startsWith('xn--'))
      out.push([
        'syntax',
        `label '${ascii}' has hyphens in the third and fourth positions (RFC 5891 §4.2.3.1)`,
      ]);
    aLabels.push(ascii);
  }
  if (out.length > 0) return out;
  const base = aLabels.join('.');
  if ((wildcard ? base.length + 2 : base.length) > 253) return [['too_long', 'is longer than 253 octets']];
  if (wildcard && isPublicSuffix(base))
    return [['wildcard_public_suffix', `puts a wildcard directly on the public suffix '${base}'`]];
  if (!wildcard && isPublicSuffix(base)) return [['public_suffix', 'is a public suffix']];
  return [];
}

function sanProblems(san: SubjectAltName, allowIp: boolean): [NameProblemCode, string][] {
  switch (san.type) {
    case 'dns':
      return dnsProblems(san.value);
    case 'ip':
      if (!isIP(san.value)) return [['ip_invalid', 'is not an IP address']];
      return allowIp ? [] : [['ip_not_allowed', 'is an IP address, which the rules do not allow']];
    default: {
      const chars = characterProblem(san.value);
      return chars ? [chars] : [];
    }
  }
}

const sameName = (san: SubjectAltName, cn: string): boolean =>
  san.type === 'ip' ? san.value === cn : san.type === 'dns' && san.value.toLowerCase() === cn.toLowerCase();

/** Lints the names of a certificate; an empty `problems` list means they may be signed. */
export function lintCertificateNames(input: NameLintInput): NameLintResult {
  const allowIp = input.allowIp ?? false;
  const sans = [...input.sans];
  const problems: NameProblem[] = [];
  const report = (field: string, name: string, found: [NameProblemCode, string][]) => {
    for (const [code, message] of found)
      problems.push({ field, name, code, message: `'${name.slice(0, 256)}' ${message}` });
  };
  const cn = input.commonName ?? '';
  if (cn !== '') {
    const chars = characterProblem(cn);
    if (chars) report('common_name', cn, [chars]);
    else if (!sans.some((s) => sameName(s, cn))) {
      if ((input.commonNameRule ?? 'refuse') === 'add')
        sans.push(isIP(cn) ? { type: 'ip', value: cn } : { type: 'dns', value: cn });
      else report('common_name', cn, [['cn_not_in_sans', 'is not one of the subject alternative names']]);
    }
  }
  for (const [i, san] of sans.entries()) report(`sans.${i}`, san.value, sanProblems(san, allowIp));
  return { problems, sans };
}

/** The problems as one `name_rejected` error naming every field, or null when there are none. */
export function nameLintError(problems: readonly NameProblem[]): CertwrightError | null {
  if (problems.length === 0) return null;
  return fail('name_rejected', `names refused: ${problems.map((p) => p.message).join('; ')}`, {
    fields: problems.map((p) => ({ field: p.field, message: p.message })),
  });
}

/** Lints and throws `name_rejected` on any problem; returns the SANs to sign. */
export function assertCertificateNames(input: NameLintInput): SubjectAltName[] {
  const { problems, sans } = lintCertificateNames(input);
  const error = nameLintError(problems);
  if (error) throw error;
  return sans;
}
