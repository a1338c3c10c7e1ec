import { fail, isCertwrightError } from '../../errors.js';
import { DEFAULT_CERTIFICATE_LIMITS } from '../../pki/certificate-info.js';
import { parseCertsOnly } from '../../pki/cms/signed-data.js';
import { Tag } from '../../pki/der.js';
import {
  assertDerBounds,
  children,
  expectTag,
  raw,
  readBitStringBytes,
  readRoot,
  readTime,
} from '../../pki/der-reader.js';
import { decodeBasicConstraints, decodeExtensions, type RawExtension } from '../../pki/extensions.js';
import { decodeName } from '../../pki/name.js';
import { OID } from '../../pki/oids.js';
import { pemDecodeAll } from '../../pki/pem.js';
import { describeKey } from './key-description.js';

/*
 * The GetCACert answer (RFC 8894 §4.2.1): one DER certificate (`application/x-x509-ca-cert`)
 * or a certificates-only PKCS#7 SignedData with the CA and its RA certificates
 * (`application/x-x509-ca-ra-cert`). Servers in the field also send either of them in PEM, and
 * mislabel their content types, so the body is recognised by its bytes, not by its header.
 */

/** What a probe reports of one certificate. */
export interface CertificateSummary {
  der: Uint8Array;
  subject: string;
  issuer: string;
  /** The exact subject and issuer Name bytes: issuers are matched byte for byte (RFC 5280 §7.1 aside). */
  subjectDer: Uint8Array;
  issuerDer: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  keyAlgorithm: string;
  /** basicConstraints cA (RFC 5280 §4.2.1.9); false when the extension is absent. */
  isCa: boolean;
}

/** A GetCACert body holds a handful of certificates; more is not a SCEP server. */
export const MAX_CA_CERTIFICATES = 32;

/**
 * Reads the fields a probe reports from one certificate. Tolerant where the inventory's reader
 * is strict: any key algorithm and size is described rather than refused. Bounded like every
 * certificate from outside; failures are `malformed` or `too_large`.
 */
export function summarizeCertificate(der: Uint8Array): CertificateSummary {
  try {
    assertDerBounds(der, DEFAULT_CERTIFICATE_LIMITS, 'certificate');
    const root = expectTag(readRoot(der), Tag.SEQUENCE, 'certificate');
    if (root.end !== der.length) throw fail('malformed', 'certificate: trailing bytes');
    const tbs = children(der, expectTag(children(der, root)[0], Tag.SEQUENCE, 'tbsCertificate'));
    let i = tbs[0]?.tag === 0xa0 ? 1 : 0;
    i += 2; // serialNumber, signature AlgorithmIdentifier
    const issuer = decodeName(der, tbs[i++], 'issuer');
    const validity = children(der, expectTag(tbs[i++], Tag.SEQUENCE, 'validity'));
    const subject = decodeName(der, tbs[i++], 'subject');
    const spkiNode = expectTag(tbs[i++], Tag.SEQUENCE, 'subjectPublicKeyInfo');
    const spki = raw(der, spkiNode);
    const publicKeyBits = readBitStringBytes(der, children(der, spkiNode)[1], 'subjectPublicKey');
    let extensions: RawExtension[] = [];
    for (; i < tbs.length; i++) {
      const n = tbs[i]!;
      if (n.tag === 0xa3)
        extensions = decodeExtensions(
          der,
          expectTag(children(der, n)[0], Tag.SEQUENCE, 'extensions'),
          'extensions',
        );
    }
    const bc = extensions.find((e) => e.oid === OID.basicConstraints);
    return {
      der,
      subject: subject.text,
      issuer: issuer.text,
      subjectDer: subject.der,
      issuerDer: issuer.der,
      notBefore: readTime(der, validity[0], 'notBefore'),
      notAfter: readTime(der, validity[1], 'notAfter'),
      keyAlgorithm: describeKey(spki, publicKeyBits),
      isCa: bc ? decodeBasicConstraints(bc.value).ca : false,
    };
  } catch (cause) {
    if (isCertwrightError(cause)) throw cause;
    throw fail('malformed', 'not a valid X.509 certificate', { cause });
  }
}

const PEM_START = /^\s*-----BEGIN /;

/** A DER SEQUENCE whose first element is an OBJECT IDENTIFIER is a ContentInfo, not a certificate. */
function looksLikeContentInfo(body: Uint8Array): boolean {
  if (body[0] !== Tag.SEQUENCE || body.length < 3) return false;
  const first = body[1]!;
  // Short form, indefinite (BER, which PKCS#7 from old servers uses) or 1–4 length octets.
  const headerLength = first < 0x80 || first === 0x80 ? 2 : 2 + (first & 0x7f);
  return body[headerLength] === Tag.OID;
}

function certificatesOfDer(body: Uint8Array): Uint8Array[] {
  if (looksLikeContentInfo(body)) {
    return parseCertsOnly(body);
  }
  return [body];
}

/**
 * The certificates of a GetCACert body, in message order: PKCS#7 certificates-only (DER, or
 * BER as old servers write it), one raw DER certificate, or PEM with CERTIFICATE or PKCS7
 * blocks. Every certificate is summarised; failures are `malformed` or `too_large`.
 */
export function readCaCertificates(body: Uint8Array): CertificateSummary[] {
  let ders: Uint8Array[];
  const head = Buffer.from(body.subarray(0, 64)).toString('latin1');
  if (PEM_START.test(head)) {
    const text = Buffer.from(body).toString('latin1');
    ders = [];
    for (const block of pemDecodeAll(text, { maxChars: body.length, maxBlocks: MAX_CA_CERTIFICATES })) {
      if (block.label === 'CERTIFICATE' || block.label === 'X509 CERTIFICATE') ders.push(block.der);
      else if (block.label === 'PKCS7' || block.label === 'CMS') ders.push(...certificatesOfDer(block.der));
      else throw fail('malformed', `GetCACert: unexpected PEM block ${block.label.slice(0, 40)}`);
    }
  } else {
    ders = certificatesOfDer(body);
  }
  if (ders.length === 0) throw fail('malformed', 'GetCACert: the answer holds no certificate');
  if (ders.length > MAX_CA_CERTIFICATES) {
    throw fail('too_large', `GetCACert: more than ${MAX_CA_CERTIFICATES} certificates`);
  }
  return ders.map(summarizeCertificate);
}

const sameName = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/**
 * The certificate the server enrolls under, from a GetCACert chain. The CA is a certificate
 * whose basicConstraints say cA (RA certificates, RFC 8894 §2.1, are end entities):
 * 1. a CA certificate that issued one of the non-CA certificates (the RA's issuer);
 * 2. otherwise the CA certificate that issued no other CA certificate of the answer (the
 *    bottom of a chain sent with its intermediates and root);
 * 3. otherwise the first CA certificate.
 * Without any cA certificate (v1 certificates, careless CAs) a lone certificate is the CA, and
 * of several the first self-issued one, else the first.
 */
export function chooseCa(chain: readonly CertificateSummary[]): CertificateSummary {
  const cas = chain.filter((c) => c.isCa);
  if (cas.length === 0) {
    return chain.find((c) => sameName(c.subjectDer, c.issuerDer)) ?? chain[0]!;
  }
  const others = chain.filter((c) => !c.isCa);
  const raIssuer = cas.find((ca) => others.some((c) => sameName(c.issuerDer, ca.subjectDer)));
  if (raIssuer) return raIssuer;
  const issuesNoCa = cas.filter(
    (ca) =>
      !cas.some(
        (c) => c !== ca && sameName(c.issuerDer, ca.subjectDer) && !sameName(c.subjectDer, ca.subjectDer),
      ),
  );
  return issuesNoCa[0] ?? cas[0]!;
}
