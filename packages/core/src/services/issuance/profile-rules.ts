import type { CertificateProfile } from '../../domain/profile.js';
import { type CertwrightError, type FailureReason, fail } from '../../errors.js';
import type { CertificationRequest } from '../../pki/csr.js';
import type { SubjectAltName } from '../../pki/extensions.js';
import type { KeyAlgorithm, PublicKeyDescription } from '../../pki/keys.js';
import { type ExtendedKeyUsage, NAME_ATTRIBUTE_OIDS, OID } from '../../pki/oids.js';
import type { MlDsaParameterSet, SlhDsaParameterSet } from '../../pki/post-quantum.js';
import { sanOf } from '../certificate-names.js';

/**
 * The rules a certificate profile sets on a request: key algorithms and sizes, extended key
 * usages, required CSR attributes, IP addresses among the names. Shared by job issuance and protocol enrollment, so a CSR is
 * judged the same whichever way it arrives.
 */

/** Without a profile allowing fewer, a certificate gets both TLS usages. */
export const DEFAULT_EKUS: readonly ExtendedKeyUsage[] = ['serverAuth', 'clientAuth'];

/** A refused certificate request: 400 naming the field, with the precise reason. */
export const refuse = (field: string, message: string, reason: FailureReason): CertwrightError =>
  fail(reason, `certificate request refused: ${message}`, { fields: [{ field, message }] });

interface KeyProblem {
  reason: 'key_rejected' | 'key_not_allowed';
  message: string;
}

export function keyAllowed(profile: CertificateProfile | null, key: PublicKeyDescription): KeyProblem | null {
  // Below these sizes no profile may go (NIST SP 800-131A).
  if (key.type === 'RSA' && (key.bits < 2048 || key.bits > 16384))
    return { reason: 'key_rejected', message: `RSA-${key.bits} is outside 2048–16384 bits` };
  if (key.type === 'Ed448') return { reason: 'key_rejected', message: 'Ed448 keys are not supported' };
  if (!profile || profile.allowed_key_algorithms.length === 0) return null;
  const ok = profile.allowed_key_algorithms.some((a) => {
    switch (a.algorithm) {
      case 'RSA':
        return key.type === 'RSA' && a.sizes.includes(key.bits);
      case 'ECDSA':
        return key.type === 'EC' && a.curves.includes(key.curve);
      case 'Ed25519':
        return key.type === 'Ed25519';
      case 'ML-DSA':
      case 'SLH-DSA':
        return key.type === a.algorithm && (a.parameter_sets as string[]).includes(key.parameterSet);
      default:
        return false;
    }
  });
  if (ok) return null;
  const name =
    key.type === 'RSA'
      ? `RSA-${key.bits}`
      : key.type === 'EC'
        ? `ECDSA ${key.curve}`
        : key.type === 'ML-DSA' || key.type === 'SLH-DSA'
          ? key.parameterSet
          : key.type;
  return { reason: 'key_not_allowed', message: `${name} is not allowed by profile '${profile.name}'` };
}

/** The key algorithm for server-side generation: the caller's choice if allowed, else the profile's first. */
export function serverKeyAlgorithm(
  profile: CertificateProfile | null,
  requested: KeyAlgorithm | undefined,
): KeyAlgorithm {
  const describe = (a: KeyAlgorithm): PublicKeyDescription =>
    a.startsWith('RSA')
      ? { type: 'RSA', bits: Number(a.slice(4)) }
      : a === 'Ed25519'
        ? { type: 'Ed25519' }
        : a.startsWith('ECDSA')
          ? { type: 'EC', curve: a === 'ECDSA-P384' ? 'P-384' : 'P-256' }
          : a.startsWith('ML-DSA')
            ? { type: 'ML-DSA', parameterSet: a as MlDsaParameterSet }
            : { type: 'SLH-DSA', parameterSet: a as SlhDsaParameterSet };
  if (requested) {
    const problem = keyAllowed(profile, describe(requested));
    if (problem) throw refuse('key_algorithm', problem.message, problem.reason);
    return requested;
  }
  const first = profile?.allowed_key_algorithms[0];
  if (!first) return 'ECDSA-P256';
  if (first.algorithm === 'Ed25519') return 'Ed25519';
  if (first.algorithm === 'ML-DSA' || first.algorithm === 'SLH-DSA') return first.parameter_sets[0]!;
  if (first.algorithm === 'ECDSA') {
    const curve = first.curves.find((c) => c === 'P-256' || c === 'P-384');
    if (!curve)
      throw refuse(
        'key_algorithm',
        `profile '${profile!.name}' allows only curves certwright cannot generate`,
        'key_not_allowed',
      );
    return curve === 'P-256' ? 'ECDSA-P256' : 'ECDSA-P384';
  }
  const size = first.sizes.find((s) => s === 2048 || s === 3072 || s === 4096);
  if (!size)
    throw refuse(
      'key_algorithm',
      `profile '${profile!.name}' allows only RSA sizes certwright cannot generate`,
      'key_not_allowed',
    );
  return `RSA-${size}` as KeyAlgorithm;
}

const PKCS10_ATTRIBUTES: Record<string, string> = {
  challengePassword: OID.challengePassword,
  extensionRequest: OID.extensionRequest,
  unstructuredName: '1.2.840.113549.1.9.2',
};

const DOTTED_OID = /^\d+(\.\d+)+$/;

/** The OID of a subject attribute as the CSR parser names it (a short name, or the dotted OID). */
const nameAttributeOid = (type: string): string =>
  DOTTED_OID.test(type) ? type : (NAME_ATTRIBUTE_OIDS[type.toUpperCase()] ?? type);

/**
 * Required CSR attributes: EKU names, DN attribute names (any spelling of NAME_ATTRIBUTE_OIDS:
 * `CN`, `serialNumber`, `emailAddress` …), PKCS#10 attributes, dotted OIDs (of a subject
 * attribute or a CSR attribute) — the names profile writes accept, the ones `/csrattrs`
 * advertises. A name of none of these kinds (stored before writes checked them) is missing.
 */
function missingRequiredAttributes(profile: CertificateProfile, csr: CertificationRequest): string[] {
  const dn = new Set(csr.subject.rdns.flat().map((a) => nameAttributeOid(a.type)));
  const ekus = new Set(csr.extendedKeyUsage ?? []);
  return profile.required_csr_attributes.filter((name) => {
    if (name in PKCS10_ATTRIBUTES) return !csr.attributeOids.includes(PKCS10_ATTRIBUTES[name]!);
    if (
      (['serverAuth', 'clientAuth', 'codeSigning', 'emailProtection', 'timeStamping'] as string[]).includes(
        name,
      )
    )
      return !ekus.has(name);
    const known = NAME_ATTRIBUTE_OIDS[name.toUpperCase()];
    if (known) return !dn.has(known);
    if (DOTTED_OID.test(name)) return !dn.has(name) && !csr.attributeOids.includes(name);
    return true;
  });
}

/**
 * Everything a profile says about a parsed (signature-verified) CSR except its names: no CA
 * request, an allowed key, allowed usages, the required attributes. Returns the usages to sign.
 */
export function checkCsrAgainstProfile(
  profile: CertificateProfile | null,
  csr: CertificationRequest,
): ExtendedKeyUsage[] {
  if (csr.basicConstraints?.ca)
    throw refuse('csr', 'the request asks for a CA certificate', 'eku_not_allowed');
  const keyProblem = keyAllowed(profile, csr.publicKey);
  if (keyProblem) throw refuse('csr', keyProblem.message, keyProblem.reason);
  const allowedEkus: ExtendedKeyUsage[] = profile?.allowed_ekus.length
    ? [...profile.allowed_ekus]
    : [...DEFAULT_EKUS];
  let ekus = allowedEkus;
  if (csr.extendedKeyUsage?.length) {
    const unknown = csr.extendedKeyUsage.filter((e) => !(allowedEkus as string[]).includes(e));
    if (unknown.length) {
      throw refuse('csr', `extended key usage ${unknown.join(', ')} is not allowed`, 'eku_not_allowed');
    }
    ekus = csr.extendedKeyUsage as ExtendedKeyUsage[];
  }
  if (profile) {
    const missing = missingRequiredAttributes(profile, csr);
    if (missing.length) {
      throw refuse('csr', `required CSR attributes missing: ${missing.join(', ')}`, 'csr_attribute_missing');
    }
  }
  return ekus;
}

/**
 * IP addresses are named only under a profile with `allow_ip_sans`; a certificate without a
 * profile keeps the general name rule (certificate-names.ts), which accepts valid IPs.
 */
export function checkNamesAgainstProfile(
  profile: CertificateProfile | null,
  names: readonly SubjectAltName[],
  field: string,
): void {
  if (!profile || profile.allow_ip_sans) return;
  const ips = [...new Set(names.filter((s) => s.type === 'ip').map((s) => s.value))];
  if (ips.length === 0) return;
  throw refuse(
    field,
    `IP address${ips.length > 1 ? 'es' : ''} ${ips.join(', ')} ${ips.length > 1 ? 'are' : 'is'} not allowed by profile '${profile.name}' (allow_ip_sans is false)`,
    'name_not_allowed',
  );
}

/** The same rule on a certificate record's strings, naming `sans` or `common_name`. */
export function checkRecordNamesAgainstProfile(
  profile: CertificateProfile | null,
  commonName: string,
  sans: readonly string[],
): void {
  checkNamesAgainstProfile(profile, sans.map(sanOf), 'sans');
  checkNamesAgainstProfile(profile, [sanOf(commonName)], 'common_name');
}
