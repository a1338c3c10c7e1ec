import { type KeyObject, randomFillSync } from 'node:crypto';
import { CertwrightError } from '../errors.js';
import { type CertificateInfo, keyIdentifierOf, readCertificate, serialToHex } from './certificate-info.js';
import { bitString, explicit, extension, integer, sequence, time, unsignedIntegerContent } from './der.js';
import { children, readBitStringBytes, readOid, readRoot } from './der-reader.js';
import {
  authorityInfoAccessValue,
  authorityKeyIdentifierValue,
  type BasicConstraints,
  basicConstraintsValue,
  crlDistributionPointsValue,
  decodeBasicConstraints,
  extKeyUsageValue,
  type KeyUsage,
  keyUsageValue,
  mustStapleValue,
  noRevAvailValue,
  ocspNoCheckValue,
  type RawExtension,
  type SubjectAltName,
  subjectAltNameValue,
  subjectKeyIdentifierValue,
} from './extensions.js';
import { checkSubjectPublicKeyInfo } from './key-check.js';
import { exportSpkiDer } from './keys.js';
import { type DistinguishedName, encodeName } from './name.js';
import { type ExtendedKeyUsage, OID } from './oids.js';
import { pemEncode } from './pem.js';
import {
  type PrivateSigningKey,
  type SignatureAlgorithm,
  signatureAlgorithmFor,
  signData,
  signingKeySpki,
} from './signature.js';

/**
 * X.509 v3 certificate builder (RFC 5280) for leaves and CAs. TBSCertificate is written with
 * our DER writer and signed with node:crypto: one code path for every certificate, measured
 * in bench/pki.ts against @peculiar/x509 and verified with `openssl verify -x509_strict`.
 */

export interface CertificateTemplate {
  subject: DistinguishedName;
  /** The subject's public key (KeyObject or SubjectPublicKeyInfo DER). */
  publicKey: KeyObject | Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** Serial as magnitude bytes or hex; default: 128 random bits, positive. */
  serialNumber?: Uint8Array | string;
  subjectAltNames?: readonly SubjectAltName[];
  /** Default: CA → keyCertSign, cRLSign, digitalSignature; leaf → digitalSignature (+ keyEncipherment for RSA). */
  keyUsage?: readonly KeyUsage[];
  extendedKeyUsage?: readonly (ExtendedKeyUsage | string)[];
  /** Default `{ ca: false }`. Always written, and critical (RFC 5280 §4.2.1.9). */
  basicConstraints?: BasicConstraints;
  crlDistributionPoints?: readonly string[];
  /** Where delta CRLs are (freshestCRL, RFC 5280 §4.2.1.15); same syntax as the CDP. */
  freshestCrl?: readonly string[];
  authorityInfoAccess?: { ocsp?: readonly string[]; caIssuers?: readonly string[] };
  /** TLS Feature status_request (RFC 7633). */
  mustStaple?: boolean;
  /** id-pkix-ocsp-nocheck, for delegated OCSP responder certificates (RFC 6960 §4.2.2.2.1). */
  ocspNoCheck?: boolean;
  /**
   * noRevAvail (RFC 9608): no CRL or OCSP will ever cover this certificate. Refused together
   * with a CRL distribution point, freshestCRL or an OCSP URL, which RFC 9608 §4 rules out.
   */
  noRevAvail?: boolean;
  /** Further extensions copied verbatim (after validation by the caller). */
  extraExtensions?: readonly RawExtension[];
}

/** A CA ready to sign: parsed once, reused for every issuance. Holds the private key — never log it. */
export interface IssuingAuthority {
  certificate: CertificateInfo;
  privateKey: PrivateSigningKey;
  signatureAlgorithm: SignatureAlgorithm;
}

export interface IssuedCertificate {
  der: Buffer;
  /** Lowercase hex, no leading zeros. */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
}

// Serials come from a pooled CSPRNG buffer: one randomFillSync per 256 serials instead of a
// native call per certificate (measurable at thousands of issuances per second).
const serialPool = Buffer.alloc(16 * 256);
let serialPoolOffset = serialPool.length;

/** A random positive 128-bit serial (CA/B Forum asks for ≥ 64 bits of CSPRNG output). */
export function randomSerialNumber(): Buffer {
  if (serialPoolOffset === serialPool.length) {
    randomFillSync(serialPool);
    serialPoolOffset = 0;
  }
  const b = Buffer.from(serialPool.subarray(serialPoolOffset, serialPoolOffset + 16));
  serialPool.fill(0, serialPoolOffset, serialPoolOffset + 16); // never hand out the same bytes twice
  serialPoolOffset += 16;
  b[0] = b[0]! & 0x7f;
  if (b[0] === 0) b[0] = 0x01; // keep the full 16 octets so the length never varies
  return b;
}

function serialBytes(serial: Uint8Array | string | undefined): Uint8Array {
  if (serial === undefined) return randomSerialNumber();
  const bytes = typeof serial === 'string' ? hexSerial(serial) : serial;
  const trimmed = unsignedIntegerContent(bytes);
  if (trimmed.length > 20 || trimmed.every((b) => b === 0)) {
    throw new CertwrightError(
      'validation_failed',
      'serial number must be positive and at most 20 octets (RFC 5280 §4.1.2.2)',
    );
  }
  return bytes;
}

function hexSerial(hex: string): Buffer {
  const clean = hex.replace(/[:\s]/g, '');
  if (!/^[0-9a-fA-F]+$/.test(clean))
    throw new CertwrightError('validation_failed', `serial '${hex}' is not hex`);
  return Buffer.from(clean.length % 2 ? `0${clean}` : clean, 'hex');
}

/** Prepares an issuing CA: checks it is a CA and that the key matches its certificate. */
export function prepareIssuer(
  certificate: Uint8Array | string | CertificateInfo,
  privateKey: PrivateSigningKey,
  options: { rsaHash?: 'sha256' | 'sha384' | 'sha512' } = {},
): IssuingAuthority {
  const info =
    typeof certificate === 'string' || certificate instanceof Uint8Array
      ? readCertificate(certificate)
      : certificate;
  const bc = info.extensions.find((e) => e.oid === OID.basicConstraints);
  if (!bc || !decodeBasicConstraints(bc.value).ca) {
    throw new CertwrightError(
      'validation_failed',
      'the issuer certificate is not a CA (basicConstraints cA is not set)',
    );
  }
  if (!signingKeySpki(privateKey).equals(Buffer.from(info.spki))) {
    throw new CertwrightError(
      'validation_failed',
      'the issuer private key does not match the issuer certificate',
    );
  }
  return {
    certificate: info,
    privateKey,
    signatureAlgorithm: signatureAlgorithmFor(privateKey, options.rsaHash),
  };
}

function defaultKeyUsage(ca: boolean, keyAlgorithmOid: string): KeyUsage[] {
  if (ca) return ['digitalSignature', 'keyCertSign', 'cRLSign'];
  // RSA key transport in TLS ≤ 1.2 needs keyEncipherment; EC/EdDSA keys only sign.
  return keyAlgorithmOid === OID.rsaEncryption
    ? ['digitalSignature', 'keyEncipherment']
    : ['digitalSignature'];
}

/** Extensions the builder writes from template fields. */
const BUILDER_EXTENSIONS = new Set<string>([
  OID.basicConstraints,
  OID.keyUsage,
  OID.extKeyUsage,
  OID.subjectKeyIdentifier,
  OID.authorityKeyIdentifier,
  OID.subjectAltName,
  OID.cRLDistributionPoints,
  OID.freshestCRL,
  OID.authorityInfoAccess,
  OID.tlsFeature,
  OID.idPkixOcspNocheck,
  OID.noRevAvail,
]);

interface SignerContext {
  issuerName: Uint8Array;
  authorityKeyId: Uint8Array;
  privateKey: PrivateSigningKey;
  signatureAlgorithm: SignatureAlgorithm;
}

function build(
  t: CertificateTemplate,
  signer: SignerContext,
  subjectName: Buffer,
  spki: Buffer,
): IssuedCertificate {
  if (!(t.notAfter.getTime() > t.notBefore.getTime())) {
    throw new CertwrightError('validation_failed', 'notAfter must be later than notBefore', {
      fields: [{ field: 'not_after', message: 'must be later than not_before' }],
    });
  }
  const bc = t.basicConstraints ?? { ca: false };
  // Read the key algorithm and bits from the SPKI bytes: importing a KeyObject costs more than signing.
  const [spkiAlg, spkiBits] = children(spki, readRoot(spki));
  const keyAlgorithmOid = readOid(
    spki,
    spkiAlg && children(spki, spkiAlg)[0],
    'subjectPublicKeyInfo.algorithm',
  );
  const publicKeyBits = readBitStringBytes(spki, spkiBits, 'subjectPublicKey');
  const emptySubject = subjectName.length === 2;
  const sans = t.subjectAltNames ?? [];
  if (emptySubject && sans.length === 0) {
    throw new CertwrightError(
      'validation_failed',
      'a certificate needs a subject or at least one subject alternative name',
      {
        fields: [{ field: 'subject', message: 'empty subject and no subject alternative names' }],
      },
    );
  }

  const exts: Buffer[] = [
    extension(OID.basicConstraints, true, basicConstraintsValue(bc)),
    extension(OID.keyUsage, true, keyUsageValue(t.keyUsage ?? defaultKeyUsage(bc.ca, keyAlgorithmOid))),
  ];
  if (t.extendedKeyUsage?.length)
    exts.push(extension(OID.extKeyUsage, false, extKeyUsageValue(t.extendedKeyUsage)));
  exts.push(
    extension(OID.subjectKeyIdentifier, false, subjectKeyIdentifierValue(keyIdentifierOf(publicKeyBits))),
  );
  exts.push(extension(OID.authorityKeyIdentifier, false, authorityKeyIdentifierValue(signer.authorityKeyId)));
  // RFC 5280 §4.2.1.6: with an empty subject the SAN extension must be critical.
  if (sans.length) exts.push(extension(OID.subjectAltName, emptySubject, subjectAltNameValue(sans)));
  if (t.crlDistributionPoints?.length) {
    exts.push(
      extension(OID.cRLDistributionPoints, false, crlDistributionPointsValue(t.crlDistributionPoints)),
    );
  }
  // RFC 5280 §4.2.1.15: non-critical, DistributionPoints like the CDP.
  if (t.freshestCrl?.length) {
    exts.push(extension(OID.freshestCRL, false, crlDistributionPointsValue(t.freshestCrl)));
  }
  const aia = t.authorityInfoAccess;
  if (aia && ((aia.ocsp?.length ?? 0) > 0 || (aia.caIssuers?.length ?? 0) > 0)) {
    exts.push(extension(OID.authorityInfoAccess, false, authorityInfoAccessValue(aia)));
  }
  if (t.mustStaple) exts.push(extension(OID.tlsFeature, false, mustStapleValue()));
  if (t.ocspNoCheck) exts.push(extension(OID.idPkixOcspNocheck, false, ocspNoCheckValue()));
  if (t.noRevAvail) {
    if (t.crlDistributionPoints?.length || t.freshestCrl?.length || aia?.ocsp?.length) {
      throw new CertwrightError(
        'validation_failed',
        'a certificate with noRevAvail must name no CRL distribution point, delta CRL or OCSP responder (RFC 9608 §4)',
      );
    }
    exts.push(extension(OID.noRevAvail, false, noRevAvailValue()));
  }
  for (const e of t.extraExtensions ?? []) {
    // RFC 5280 §4.2: an extension appears at most once; the builder's own ones win by refusal.
    if (BUILDER_EXTENSIONS.has(e.oid)) {
      throw new CertwrightError(
        'validation_failed',
        `extension ${e.oid} is set through its own template field`,
        {
          fields: [{ field: 'extensions', message: `${e.oid} must not be passed as an extra extension` }],
        },
      );
    }
    exts.push(extension(e.oid, e.critical, e.value));
  }

  const serial = serialBytes(t.serialNumber);
  const tbs = sequence(
    explicit(0, integer(2)),
    integer(serial),
    signer.signatureAlgorithm.identifier,
    signer.issuerName,
    sequence(time(t.notBefore), time(t.notAfter)),
    subjectName,
    spki,
    explicit(3, sequence(...exts)),
  );
  const signature = signData(signer.signatureAlgorithm, signer.privateKey, tbs);
  return {
    der: sequence(tbs, signer.signatureAlgorithm.identifier, bitString(signature)),
    serialNumber: serialToHex(serial),
    // The encoding keeps whole seconds only; report what was written.
    notBefore: new Date(Math.floor(t.notBefore.getTime() / 1000) * 1000),
    notAfter: new Date(Math.floor(t.notAfter.getTime() / 1000) * 1000),
  };
}

/** The subject key's SPKI; bytes from a caller pass the key check, so no bad key is ever signed. */
function spkiOf(key: KeyObject | Uint8Array): Buffer {
  if (!(key instanceof Uint8Array)) return exportSpkiDer(key);
  checkSubjectPublicKeyInfo(key);
  return Buffer.from(key);
}

/** Issues a certificate signed by `issuer`. */
export function issueCertificate(template: CertificateTemplate, issuer: IssuingAuthority): IssuedCertificate {
  if (template.notAfter.getTime() > issuer.certificate.notAfter.getTime()) {
    throw new CertwrightError('validation_failed', 'the certificate would outlive its issuer', {
      fields: [{ field: 'not_after', message: 'later than the issuer certificate notAfter' }],
    });
  }
  return build(
    template,
    {
      issuerName: issuer.certificate.subject.der,
      authorityKeyId: issuer.certificate.keyIdentifier,
      privateKey: issuer.privateKey,
      signatureAlgorithm: issuer.signatureAlgorithm,
    },
    encodeName(template.subject),
    spkiOf(template.publicKey),
  );
}

/** Creates a self-signed certificate (a root CA, usually); its key signs its own certificate. */
export function createSelfSignedCertificate(
  template: Omit<CertificateTemplate, 'publicKey'>,
  privateKey: PrivateSigningKey,
  options: { rsaHash?: 'sha256' | 'sha384' | 'sha512' } = {},
): IssuedCertificate {
  const spki = signingKeySpki(privateKey);
  const subject = encodeName(template.subject);
  const bits = readBitStringBytes(spki, children(spki, readRoot(spki))[1], 'subjectPublicKey');
  return build(
    { ...template, publicKey: spki },
    {
      issuerName: subject,
      authorityKeyId: keyIdentifierOf(bits),
      privateKey,
      signatureAlgorithm: signatureAlgorithmFor(privateKey, options.rsaHash),
    },
    subject,
    spki,
  );
}

export const certificateToPem = (der: Uint8Array): string => pemEncode('CERTIFICATE', der);
