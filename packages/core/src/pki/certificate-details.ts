import { createHash } from 'node:crypto';
import { fail, isCertwrightError } from '../errors.js';
import { certificateToPem } from './certificate.js';
import { type CertificateInfo, DEFAULT_CERTIFICATE_LIMITS, readCertificate } from './certificate-info.js';
import { Tag, tlv } from './der.js';
import {
  children,
  content,
  expectTag,
  malformed,
  readOid,
  readRoot,
  readSmallInteger,
} from './der-reader.js';
import {
  decodeAuthorityInfoAccess,
  decodeAuthorityKeyIdentifier,
  decodeBasicConstraints,
  decodeCertificatePolicies,
  decodeCrlDistributionPoints,
  decodeExtKeyUsage,
  decodeKeyUsage,
  decodeSubjectAltName,
  decodeSubjectKeyIdentifier,
} from './extensions.js';
import type { PublicKeyDescription } from './key-check.js';
import { decodeName } from './name.js';
import { OID } from './oids.js';
import { pemDecodeCertificates } from './pem.js';
import { POST_QUANTUM_PARAMETER_SETS, postQuantumByName } from './post-quantum.js';

/** A distinguished name as shown: the RFC 4514 text and its attributes, most specific first. */
export interface NameDetails {
  text: string;
  attributes: { type: string; oid: string; value: string }[];
}

/** Subject alternative names by type (RFC 5280 §4.2.1.6); names certwright does not read are described. */
export interface SubjectAltNames {
  dns: string[];
  ip: string[];
  email: string[];
  uri: string[];
  /** directoryName as its DN text, registeredID as its OID, other forms as `<form>: <hex>`. */
  other: string[];
}

/**
 * Everything a person checks on a certificate, decoded by our bounded reader: what
 * `openssl x509 -text` prints, in fields. Hex values are lower case without separators.
 */
export interface CertificateDetails {
  /** 1, 2 or 3 (the DER's version + 1). */
  version: number;
  serial_number: string;
  subject: NameDetails;
  issuer: NameDetails;
  not_before: Date;
  not_after: Date;
  signature_algorithm: string;
  /**
   * `size` is the modulus, curve or encoded key in bits; `parameter_set` names the ML-DSA or
   * SLH-DSA parameter set (`ML-DSA-65` …), null for other keys.
   */
  public_key: {
    algorithm: 'RSA' | 'EC' | 'Ed25519' | 'Ed448' | 'ML-DSA' | 'SLH-DSA';
    size: number;
    curve: string | null;
    parameter_set: string | null;
  };
  fingerprint_sha256: string;
  fingerprint_sha1: string;
  /** Subject and issuer are the same name. */
  self_signed: boolean;
  subject_alt_names: SubjectAltNames;
  /** Null when the extension is absent. */
  key_usage: string[] | null;
  /** By name when known (`serverAuth` …), by OID otherwise; null when absent. */
  extended_key_usage: string[] | null;
  basic_constraints: { ca: boolean; path_length: number | null; critical: boolean } | null;
  subject_key_identifier: string | null;
  authority_key_identifier: string | null;
  crl_distribution_points: string[];
  ocsp_urls: string[];
  ca_issuer_urls: string[];
  /** Policy OIDs. */
  policies: string[];
  /** Every extension present, in order. */
  extensions: { oid: string; name: string | null; critical: boolean }[];
  /** The certificate itself, PEM (what a download of this one certificate holds). */
  pem: string;
}

const SIGNATURE_NAMES: Record<string, string> = {
  [OID.sha1WithRSAEncryption]: 'sha1WithRSAEncryption',
  [OID.sha256WithRSAEncryption]: 'sha256WithRSAEncryption',
  [OID.sha384WithRSAEncryption]: 'sha384WithRSAEncryption',
  [OID.sha512WithRSAEncryption]: 'sha512WithRSAEncryption',
  [OID.rsassaPss]: 'rsassaPss',
  [OID.ecdsaWithSHA1]: 'ecdsaWithSHA1',
  [OID.ecdsaWithSHA256]: 'ecdsaWithSHA256',
  [OID.ecdsaWithSHA384]: 'ecdsaWithSHA384',
  [OID.ecdsaWithSHA512]: 'ecdsaWithSHA512',
  [OID.idEd25519]: 'Ed25519',
  [OID.idEd448]: 'Ed448',
  ...Object.fromEntries(POST_QUANTUM_PARAMETER_SETS.map((name) => [postQuantumByName(name)!.oid, name])),
};

function publicKeyDetails(key: PublicKeyDescription): CertificateDetails['public_key'] {
  switch (key.type) {
    case 'RSA':
      return { algorithm: 'RSA', size: key.bits, curve: null, parameter_set: null };
    case 'EC':
      return { algorithm: 'EC', size: Number(key.curve.slice(2)), curve: key.curve, parameter_set: null };
    case 'Ed25519':
    case 'Ed448':
      return {
        algorithm: key.type,
        size: key.type === 'Ed25519' ? 256 : 456,
        curve: null,
        parameter_set: null,
      };
    default: {
      const size = 8 * postQuantumByName(key.parameterSet)!.publicKeyBytes;
      return { algorithm: key.type, size, curve: null, parameter_set: key.parameterSet };
    }
  }
}

const EXTENSION_NAMES: Record<string, string> = {
  [OID.subjectKeyIdentifier]: 'subjectKeyIdentifier',
  [OID.keyUsage]: 'keyUsage',
  [OID.subjectAltName]: 'subjectAltName',
  [OID.issuerAltName]: 'issuerAltName',
  [OID.basicConstraints]: 'basicConstraints',
  [OID.nameConstraints]: 'nameConstraints',
  [OID.cRLDistributionPoints]: 'cRLDistributionPoints',
  [OID.certificatePolicies]: 'certificatePolicies',
  [OID.authorityKeyIdentifier]: 'authorityKeyIdentifier',
  [OID.extKeyUsage]: 'extKeyUsage',
  [OID.authorityInfoAccess]: 'authorityInfoAccess',
  [OID.tlsFeature]: 'tlsFeature',
  [OID.idPkixOcspNocheck]: 'ocspNoCheck',
  '1.3.6.1.4.1.11129.2.4.2': 'signedCertificateTimestampList',
  '1.3.6.1.4.1.11129.2.4.3': 'precertificatePoison',
};

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The signatureAlgorithm of a certificate's DER, by name when known, else its OID. */
export function signatureAlgorithmOf(der: Uint8Array): string {
  const root = expectTag(readRoot(der), Tag.SEQUENCE, 'certificate');
  const alg = expectTag(children(der, root)[1], Tag.SEQUENCE, 'signatureAlgorithm');
  const oid = readOid(der, children(der, alg)[0], 'signatureAlgorithm');
  return SIGNATURE_NAMES[oid] ?? oid;
}

/** The version field: [0] EXPLICIT INTEGER, absent for v1 (RFC 5280 §4.1.2.1). */
function versionOf(der: Uint8Array): number {
  const tbs = children(der, readRoot(der))[0]!;
  const first = children(der, tbs)[0];
  if (first?.tag !== 0xa0) return 1;
  const version = readSmallInteger(der, children(der, first)[0], 'version');
  if (version < 0 || version > 2) throw malformed('version', `version ${version} is not 1, 2 or 3`);
  return version + 1;
}

function nameDetails(name: CertificateInfo['subject']): NameDetails {
  return {
    text: name.text,
    attributes: [...name.rdns].reverse().flatMap((rdn) => rdn.map((a) => ({ ...a }))),
  };
}

const GENERAL_NAME_FORMS: Record<number, string> = {
  160: 'otherName',
  163: 'x400Address',
  164: 'directoryName',
  165: 'ediPartyName',
  136: 'registeredID',
};

function sansOf(value: Uint8Array): SubjectAltNames {
  const out: SubjectAltNames = { dns: [], ip: [], email: [], uri: [], other: [] };
  for (const san of decodeSubjectAltName(value)) {
    if (san.type !== 'other') {
      out[san.type].push(san.value);
      continue;
    }
    const node = readRoot(san.der);
    if (san.tag === 0xa4) {
      out.other.push(
        `directoryName: ${decodeName(san.der, children(san.der, node)[0], 'directoryName').text}`,
      );
    } else if (san.tag === 0x88) {
      // registeredID is [8] IMPLICIT OBJECT IDENTIFIER: read the content as an OID.
      const oid = tlv(Tag.OID, content(san.der, node));
      out.other.push(`registeredID: ${readOid(oid, readRoot(oid), 'registeredID')}`);
    } else {
      const form = GENERAL_NAME_FORMS[san.tag] ?? `[${san.tag.toString(16)}]`;
      out.other.push(`${form}: ${hex(content(san.der, node)).slice(0, 512)}`);
    }
  }
  return out;
}

function describe(info: CertificateInfo): CertificateDetails {
  const der = info.der;
  const ext = (oid: string) => info.extensions.find((e) => e.oid === oid);
  const key = info.publicKey;
  const san = ext(OID.subjectAltName);
  const ku = ext(OID.keyUsage);
  const eku = ext(OID.extKeyUsage);
  const bc = ext(OID.basicConstraints);
  const ski = ext(OID.subjectKeyIdentifier);
  const aki = ext(OID.authorityKeyIdentifier);
  const cdp = ext(OID.cRLDistributionPoints);
  const aia = ext(OID.authorityInfoAccess);
  const policies = ext(OID.certificatePolicies);
  const access = aia ? decodeAuthorityInfoAccess(aia.value) : { ocsp: [], caIssuers: [] };
  const constraints = bc ? decodeBasicConstraints(bc.value) : null;
  const akiBytes = aki ? decodeAuthorityKeyIdentifier(aki.value) : null;
  return {
    version: versionOf(der),
    serial_number: info.serialNumber,
    subject: nameDetails(info.subject),
    issuer: nameDetails(info.issuer),
    not_before: info.notBefore,
    not_after: info.notAfter,
    signature_algorithm: signatureAlgorithmOf(der),
    public_key: publicKeyDetails(key),
    fingerprint_sha256: createHash('sha256').update(der).digest('hex'),
    fingerprint_sha1: createHash('sha1').update(der).digest('hex'),
    self_signed: Buffer.from(info.subject.der).equals(Buffer.from(info.issuer.der)),
    subject_alt_names: san ? sansOf(san.value) : { dns: [], ip: [], email: [], uri: [], other: [] },
    key_usage: ku ? decodeKeyUsage(ku.value) : null,
    extended_key_usage: eku ? decodeExtKeyUsage(eku.value) : null,
    basic_constraints:
      constraints && bc
        ? { ca: constraints.ca, path_length: constraints.pathLength ?? null, critical: bc.critical }
        : null,
    subject_key_identifier: ski ? hex(decodeSubjectKeyIdentifier(ski.value)) : null,
    authority_key_identifier: akiBytes ? hex(akiBytes) : null,
    crl_distribution_points: cdp ? decodeCrlDistributionPoints(cdp.value) : [],
    ocsp_urls: access.ocsp,
    ca_issuer_urls: access.caIssuers,
    policies: policies ? decodeCertificatePolicies(policies.value) : [],
    extensions: info.extensions.map((e) => ({
      oid: e.oid,
      name: EXTENSION_NAMES[e.oid] ?? null,
      critical: e.critical,
    })),
    pem: certificateToPem(der),
  };
}

/**
 * Decodes one certificate (DER, or a PEM with one certificate) for display. The input passes
 * the bounded reader first (`readCertificate`); every failure is a CertwrightError
 * (`malformed`, `too_large`, `key_rejected`).
 */
export function describeCertificate(input: Uint8Array | string): CertificateDetails {
  const info = readCertificate(input);
  try {
    return describe(info);
  } catch (cause) {
    if (isCertwrightError(cause)) throw cause;
    throw fail('malformed', 'not a valid X.509 certificate', { cause });
  }
}

/** At most this many certificates are decoded from one PEM text (a real chain has 1–4). */
export const MAX_DESCRIBED_CERTIFICATES = 16;

/**
 * Decodes every certificate of a PEM text (a leaf with its chain, a CA chain), in order; at most
 * {@link MAX_DESCRIBED_CERTIFICATES}, the text itself bounded like the reader's input.
 */
export function describeCertificates(pem: string): CertificateDetails[] {
  return chainDers(pem).map((der) => describeCertificate(der));
}

const chainDers = (pem: string): Buffer[] =>
  pemDecodeCertificates(pem, {
    maxChars: DEFAULT_CERTIFICATE_LIMITS.maxBytes * 2 * MAX_DESCRIBED_CERTIFICATES,
    maxBlocks: MAX_DESCRIBED_CERTIFICATES,
  });

/**
 * Like {@link describeCertificates}, but a certificate the reader refuses is counted instead of
 * failing the rest: a served chain from outside may carry one broken certificate, and the
 * others are still worth showing.
 */
export function describeEach(pem: string): { chain: CertificateDetails[]; undecodable: number } {
  const chain: CertificateDetails[] = [];
  let undecodable = 0;
  for (const der of chainDers(pem)) {
    try {
      chain.push(describeCertificate(der));
    } catch (error) {
      if (!isCertwrightError(error)) throw error;
      undecodable += 1;
    }
  }
  return { chain, undecodable };
}
