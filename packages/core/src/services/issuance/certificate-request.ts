import type { ManagedCertificate } from '../../domain/certificate.js';
import type { CertificateProfile } from '../../domain/profile.js';
import type { IssueRequest } from '../../issuers/connector.js';
import { parseCertificationRequest } from '../../pki/csr.js';
import {
  describePublicKey,
  generateKeyPair,
  type KeyAlgorithm,
  type KeyPair,
  type PublicKeyDescription,
} from '../../pki/keys.js';
import type { ExtendedKeyUsage } from '../../pki/oids.js';
import { namesToSign, sanKey, subjectAltNamesOf } from '../certificate-names.js';
import {
  checkCsrAgainstProfile,
  checkRecordNamesAgainstProfile,
  DEFAULT_EKUS,
  refuse,
  serverKeyAlgorithm,
} from './profile-rules.js';
import { isShortLived } from './short-lived.js';
import type { SigningMaterial } from './signing.js';

/** What a managed certificate asks its issuer to sign: its names, a key, usages, validity. */

const DAY = 86_400_000;
/** Without a profile and without `validity_days`: 90 days, the validity most public CAs now aim for. */
export const DEFAULT_VALIDITY_DAYS = 90;
/**
 * Without a profile, a leaf is valid at most this long (CA/Browser Forum Baseline Requirements
 * §6.3.2 for TLS server certificates); `LifecycleOptions.maxValidityDaysWithoutProfile`.
 */
export const DEFAULT_MAX_VALIDITY_DAYS_WITHOUT_PROFILE = 397;

export interface IssueParameters {
  /** PKCS#10 PEM from the caller or the agent; absent → the server generates the key. */
  csrPem?: string | null;
  keyAlgorithm?: KeyAlgorithm;
  validityDays?: number;
}

/**
 * Checks a CSR and the issuance parameters against the certificate and its profile; returns
 * what the signer needs. Throws `validation_failed` (400) with a reason; nothing is issued
 * or stored on refusal.
 */
export async function signingMaterialFor(
  now: Date,
  certificate: ManagedCertificate,
  profile: CertificateProfile | null,
  input: IssueParameters,
  maxDaysWithoutProfile: number,
): Promise<SigningMaterial> {
  const maxDays = profile?.max_validity_days ?? maxDaysWithoutProfile;
  const days = input.validityDays ?? profile?.max_validity_days ?? Math.min(DEFAULT_VALIDITY_DAYS, maxDays);
  if (days > maxDays) {
    throw refuse(
      'validity_days',
      `${days} days exceeds the ${profile ? 'profile' : 'default'} maximum of ${maxDays} days`,
      'validity_not_allowed',
    );
  }
  const sans = subjectAltNamesOf(certificate);
  const cn = certificate.common_name.trim();
  const subject = cn.length <= 64 ? [{ type: 'CN', value: cn }] : [];
  if (subject.length === 0 && sans.length === 0) {
    throw refuse(
      'common_name',
      'the certificate has no name that fits a certificate (common name over 64 characters and no SANs)',
      'name_rejected',
    );
  }
  const commonName = subject.length > 0 ? cn : null;
  // Names are linted before a key is made or a job opened; the signer lints them again.
  namesToSign(commonName, sans);
  checkRecordNamesAgainstProfile(profile, certificate.common_name, certificate.sans);
  let ekus: ExtendedKeyUsage[] = profile?.allowed_ekus.length ? [...profile.allowed_ekus] : [...DEFAULT_EKUS];
  let key: PublicKeyDescription;
  let publicKey: IssueRequest['publicKey'];
  let keyPair: KeyPair | undefined;
  let csrPem: string | null = null;
  let csrDer: Uint8Array | undefined;
  let csrMustStaple = false;
  if (input.csrPem) {
    const csr = parseCertificationRequest(input.csrPem); // verifies the signature, bounds the DER
    csrMustStaple = csr.mustStaple;
    ekus = checkCsrAgainstProfile(profile, csr);
    key = csr.publicKey;
    const allowedNames = new Set(sans.map(sanKey));
    const foreign = csr.subjectAltNames.filter((s) => s.type === 'other' || !allowedNames.has(sanKey(s)));
    if (foreign.length) {
      throw refuse(
        'csr',
        `the request names ${foreign.map((s) => (s.type === 'other' ? 'an unsupported name form' : `${s.type}:${s.value}`)).join(', ')}, which certificate '${certificate.id}' does not carry`,
        'names_mismatch',
      );
    }
    publicKey = csr.spki;
    csrPem = input.csrPem;
    csrDer = csr.der;
  } else {
    const algorithm = serverKeyAlgorithm(profile, input.keyAlgorithm);
    keyPair = await generateKeyPair(algorithm);
    key = describePublicKey(keyPair.publicKey);
    publicKey = keyPair.publicKey;
  }
  const notAfter = new Date(now.getTime() + days * DAY);
  return {
    request: {
      subject,
      subjectAltNames: sans,
      publicKey,
      notBefore: new Date(now.getTime() - 60_000), // tolerate relying parties' clock skew
      notAfter,
      extendedKeyUsage: ekus,
      // RFC 7633 §4.2.1: a requester asking for the TLS feature gets it; a profile may impose it.
      mustStaple: (profile?.must_staple ?? false) || csrMustStaple,
      shortLived: isShortLived(profile, now, notAfter),
      // For connectors that forward a CSR to a remote CA (ACME): the requester's, or the key to make one.
      ...(csrDer ? { csrDer } : {}),
      ...(keyPair ? { privateKey: keyPair.privateKey } : {}),
      ...(certificate.current_version_id ? { replacesVersionId: certificate.current_version_id } : {}),
    },
    commonName,
    ...(keyPair ? { keyPair } : {}),
    csrPem,
    key,
  };
}
