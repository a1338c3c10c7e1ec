import { createHash } from 'node:crypto';
import { CertwrightError } from '../errors.js';
import { Tag } from './der.js';
import {
  children,
  expectTag,
  raw,
  readBitStringBytes,
  readRoot,
  readTime,
  readUnsignedInteger,
} from './der-reader.js';
import { decodeExtensions, decodeSubjectKeyIdentifier, type RawExtension } from './extensions.js';
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

/** Parses a certificate given as DER bytes or a single-certificate PEM. */
export function readCertificate(input: Uint8Array | string): CertificateInfo {
  const der = typeof input === 'string' ? pemDecode(input, 'CERTIFICATE') : input;
  try {
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
      spki: raw(der, spkiNode),
      publicKeyBits,
      keyIdentifier: ski ? decodeSubjectKeyIdentifier(ski.value) : keyIdentifierOf(publicKeyBits),
      extensions,
    };
  } catch (cause) {
    if (cause instanceof CertwrightError) throw cause;
    throw new CertwrightError('bad_request', 'not a valid X.509 certificate', { cause });
  }
}
