import { createHash } from 'node:crypto';
import { fail, isCertwrightError } from '../errors.js';
import { Tag } from './der.js';
import {
  assertDerBounds,
  children,
  type DerBounds,
  expectTag,
  raw,
  readBitStringBytes,
  readRoot,
  readTime,
  readUnsignedInteger,
} from './der-reader.js';
import { decodeExtensions, decodeSubjectKeyIdentifier, type RawExtension } from './extensions.js';
import { checkSubjectPublicKeyInfo, type PublicKeyDescription } from './key-check.js';
import { type DecodedName, decodeName } from './name.js';
import { OID } from './oids.js';
import { pemDecode } from './pem.js';

/**
 * The fields of an X.509 certificate certwright needs when it issues under it or answers for
 * it: exact subject bytes (issuer names must match byte for byte), key identifiers, the raw
 * public key bits (OCSP CertID key hashes), validity. Parsing is our strict DER reader.
 */
export interface CertificateInfo {
  der: Uint8Array;
  /** Serial number as lowercase hex without leading zeros (the stored form). */
  serialNumber: string;
  issuer: DecodedName;
  subject: DecodedName;
  notBefore: Date;
  notAfter: Date;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  /** The subject key, checked from its bytes (see key-check.ts). */
  publicKey: PublicKeyDescription;
  /** The subjectPublicKey BIT STRING bytes (what key identifiers and OCSP key hashes hash). */
  publicKeyBits: Uint8Array;
  /** SubjectKeyIdentifier when present, otherwise the RFC 5280 §4.2.1.2 method-1 SHA-1. */
  keyIdentifier: Uint8Array;
  extensions: RawExtension[];
}

/** Lowercase hex of an unsigned serial, without leading zeros ("0" for zero). */
export function serialToHex(magnitude: Uint8Array): string {
  const hex = Buffer.from(magnitude).toString('hex').replace(/^0+/, '');
  return hex === '' ? '0' : hex;
}

/** SHA-1 of the subjectPublicKey bits: the key identifier method 1 of RFC 5280 §4.2.1.2. */
export const keyIdentifierOf = (publicKeyBits: Uint8Array): Buffer =>
  createHash('sha1').update(publicKeyBits).digest();

/**
 * Bounds for certificates from outside (CA imports, chains). A real certificate is 0.5–4 KiB
 * and nests about 10 levels; 64 KiB holds well over a thousand SANs. The node cap keeps the
 * decoders' memory proportional to a real certificate whatever the input.
 */
export const DEFAULT_CERTIFICATE_LIMITS: Readonly<DerBounds> = Object.freeze({
  maxBytes: 64 * 1024,
  maxNodes: 10_000,
  maxDepth: 24,
});

/**
 * Parses a certificate given as DER bytes or a single-certificate PEM. The subject key must
 * pass the key check; every failure is a `CertwrightError` (`too_large`, `malformed`,
 * `key_rejected`).
 */
export function readCertificate(
  input: Uint8Array | string,
  limits: DerBounds = DEFAULT_CERTIFICATE_LIMITS,
): CertificateInfo {
  try {
    const der =
      typeof input === 'string' ? pemDecode(input, 'CERTIFICATE', { maxChars: limits.maxBytes * 2 }) : input;
    assertDerBounds(der, limits, 'certificate');
    const root = expectTag(readRoot(der), Tag.SEQUENCE, 'certificate');
    const [tbsNode] = children(der, root);
    const tbs = children(der, expectTag(tbsNode, Tag.SEQUENCE, 'tbsCertificate'));
    let i = tbs[0]?.tag === 0xa0 ? 1 : 0;
    const serial = readUnsignedInteger(der, tbs[i++], 'serialNumber');
    i++; // signature AlgorithmIdentifier, repeated in the outer structure
    const issuer = decodeName(der, tbs[i++], 'issuer');
    const validity = children(der, expectTag(tbs[i++], Tag.SEQUENCE, 'validity'));
    const subject = decodeName(der, tbs[i++], 'subject');
    const spkiNode = expectTag(tbs[i++], Tag.SEQUENCE, 'subjectPublicKeyInfo');
    const spki = raw(der, spkiNode);
    const publicKey = checkSubjectPublicKeyInfo(spki);
    const publicKeyBits = readBitStringBytes(der, children(der, spkiNode)[1], 'subjectPublicKey');
    let extensions: RawExtension[] = [];
    for (; i < tbs.length; i++) {
      const n = tbs[i]!;
      if (n.tag === 0xa3) extensions = decodeExtensions(der, children(der, n)[0]!, 'extensions');
    }
    const ski = extensions.find((e) => e.oid === OID.subjectKeyIdentifier);
    return {
      der,
      serialNumber: serialToHex(serial),
      issuer,
      subject,
      notBefore: readTime(der, validity[0], 'notBefore'),
      notAfter: readTime(der, validity[1], 'notAfter'),
      spki,
      publicKey,
      publicKeyBits,
      keyIdentifier: ski ? decodeSubjectKeyIdentifier(ski.value) : keyIdentifierOf(publicKeyBits),
      extensions,
    };
  } catch (cause) {
    if (isCertwrightError(cause)) throw cause;
    throw fail('malformed', 'not a valid X.509 certificate', { cause });
  }
}
