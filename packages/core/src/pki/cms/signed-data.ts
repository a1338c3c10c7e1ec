import { createHash, type KeyObject, sign } from 'node:crypto';
import { fail } from '../../errors.js';
import type { CertificateInfo } from '../certificate-info.js';
import {
  algorithmIdentifier,
  implicitConstructed,
  implicitPrimitive,
  integer,
  NULL,
  octetString,
  oid,
  sequence,
  setOf,
  Tag,
  time,
  tlv,
  tlvOf,
} from '../der.js';
import {
  children,
  content,
  type DerBounds,
  type DerNode,
  expectTag,
  malformed,
  raw,
  readOid,
  readRoot,
  readSmallInteger,
  readTime,
} from '../der-reader.js';
import { describePublicKey, exportSpkiDer } from '../keys.js';
import { OID } from '../oids.js';
import { verifySignature } from '../signature.js';
import { certificateInfo, certificatePublicKey } from './certificate-cache.js';
import { CMS_OID } from './oids.js';
import {
  boundedDer,
  type CmsIdentifier,
  contentInfo,
  identifies,
  issuerAndSerialOf,
  octets,
  readAlgorithm,
  readContentInfo,
  readIssuerAndSerial,
} from './structure.js';

/**
 * SignedData (RFC 5652 §5): building with one signer, parsing, and verifying a signer. Signed
 * attributes are written as a DER SET OF — sorted by their encodings — because Go's pkcs7 (the
 * library of micromdm's SCEP client and server) re-sorts before it verifies.
 */

export type CmsDigest = 'sha1' | 'sha256' | 'sha384' | 'sha512';

/** One attribute: its type and the DER encoding of each value. */
export interface CmsAttribute {
  type: string;
  values: Uint8Array[];
}

const DIGEST_OIDS: Record<CmsDigest, string> = {
  sha1: OID.idSha1,
  sha256: OID.idSha256,
  sha384: OID.idSha384,
  sha512: OID.idSha512,
};
const DIGEST_BY_OID = new Map(Object.entries(DIGEST_OIDS).map(([name, o]) => [o, name as CmsDigest]));

const RSA_SIGNATURE: Record<CmsDigest, string> = {
  sha1: OID.sha1WithRSAEncryption,
  sha256: OID.sha256WithRSAEncryption,
  sha384: OID.sha384WithRSAEncryption,
  sha512: OID.sha512WithRSAEncryption,
};
const ECDSA_SIGNATURE: Record<CmsDigest, string> = {
  sha1: OID.ecdsaWithSHA1,
  sha256: OID.ecdsaWithSHA256,
  sha384: OID.ecdsaWithSHA384,
  sha512: OID.ecdsaWithSHA512,
};

/** The digest named by an AlgorithmIdentifier OID, or undefined when certwright does not accept it. */
export const cmsDigestName = (digestOid: string): CmsDigest | undefined => DIGEST_BY_OID.get(digestOid);

// ---------------------------------------------------------------------------------------------
// Building

export interface CmsSigner {
  /** The signer's certificate (DER); its key must be the private key's. */
  certificate: Uint8Array;
  privateKey: KeyObject;
}

export interface BuildSignedDataOptions {
  /** The encapsulated content; absent → no eContent, and messageDigest is over zero octets. */
  content?: Uint8Array;
  /** eContentType; id-data by default. */
  contentType?: string;
  signer: CmsSigner;
  digest: CmsDigest;
  /** Attributes signed along with contentType and messageDigest (which are always added). */
  signedAttributes?: CmsAttribute[];
  /** Adds a signingTime attribute (RFC 5652 §11.3). */
  signingTime?: Date;
  /** Certificates to carry, in this order; the signer's certificate alone by default. */
  certificates?: Uint8Array[];
  /** How the SignerInfo names its certificate; issuer and serial number by default (version 1). */
  signerIdentifier?: 'issuerAndSerialNumber' | 'subjectKeyIdentifier';
}

const RESERVED_ATTRIBUTES = new Set<string>([CMS_OID.contentType, CMS_OID.messageDigest]);

/** `Attribute ::= SEQUENCE { attrType, attrValues SET OF }`. */
export const encodeAttribute = (a: CmsAttribute): Buffer => sequence(oid(a.type), setOf(...a.values));

/** Signs `content` with one signer; returns the ContentInfo DER. */
export function buildSignedData(options: BuildSignedDataOptions): Buffer {
  const { signer, digest } = options;
  const cert = certificateInfo(signer.certificate);
  if (!Buffer.from(exportSpkiDer(signer.privateKey)).equals(Buffer.from(cert.spki))) {
    throw fail('invalid_input', "the signer's private key does not match its certificate");
  }
  const eContentType = options.contentType ?? CMS_OID.data;
  const body = options.content ?? new Uint8Array();
  for (const a of options.signedAttributes ?? []) {
    if (RESERVED_ATTRIBUTES.has(a.type) || (options.signingTime && a.type === CMS_OID.signingTime)) {
      throw fail('invalid_input', `signed attribute ${a.type} is written by buildSignedData itself`);
    }
  }
  const attributes = [
    encodeAttribute({ type: CMS_OID.contentType, values: [oid(eContentType)] }),
    encodeAttribute({
      type: CMS_OID.messageDigest,
      values: [octetString(createHash(digest).update(body).digest())],
    }),
    ...(options.signingTime
      ? [encodeAttribute({ type: CMS_OID.signingTime, values: [time(options.signingTime)] })]
      : []),
    ...(options.signedAttributes ?? []).map(encodeAttribute),
  ];
  // The signature covers the attributes as a DER SET OF; the SignerInfo carries the same
  // content under [0] IMPLICIT.
  const sorted = attributes.sort(Buffer.compare);
  const signedAttrs = tlvOf(Tag.SET, sorted);
  const { algorithm, signature } = signWith(signer.privateKey, digest, signedAttrs);
  const useSki = options.signerIdentifier === 'subjectKeyIdentifier';
  const sid = useSki ? implicitPrimitive(0, cert.keyIdentifier) : issuerAndSerialOf(signer.certificate);
  const signerInfo = sequence(
    integer(useSki ? 3 : 1),
    sid,
    algorithmIdentifier(DIGEST_OIDS[digest]),
    tlvOf(0xa0, sorted),
    algorithm,
    octetString(signature),
  );
  const version = useSki || eContentType !== CMS_OID.data ? 3 : 1;
  const certificates = options.certificates ?? [signer.certificate];
  const signedData = sequence(
    integer(version),
    setOf(algorithmIdentifier(DIGEST_OIDS[digest])),
    encapsulated(eContentType, options.content),
    ...(certificates.length > 0 ? [tlvOf(0xa0, certificates)] : []),
    setOf(signerInfo),
  );
  return contentInfo(CMS_OID.signedData, signedData);
}

const encapsulated = (eContentType: string, body: Uint8Array | undefined): Buffer =>
  body === undefined
    ? sequence(oid(eContentType))
    : sequence(oid(eContentType), tlv(0xa0, octetString(body)));

function signWith(
  key: KeyObject,
  digest: CmsDigest,
  data: Uint8Array,
): { algorithm: Buffer; signature: Buffer } {
  const d = describePublicKey(key);
  switch (d.type) {
    case 'RSA':
      // rsaEncryption with the digest named beside it: the form every CMS reader accepts (RFC 3370 §3.2).
      return {
        algorithm: algorithmIdentifier(CMS_OID.rsaEncryption, NULL),
        signature: sign(digest, data, key),
      };
    case 'EC':
      return { algorithm: algorithmIdentifier(ECDSA_SIGNATURE[digest]), signature: sign(digest, data, key) };
    case 'Ed25519':
      // RFC 8419 §3: the digest algorithm paired with Ed25519 is SHA-512.
      if (digest !== 'sha512')
        throw fail('invalid_input', 'an Ed25519 signer signs with digest sha512 (RFC 8419)');
      return { algorithm: algorithmIdentifier(OID.idEd25519), signature: sign(null, data, key) };
    default:
      throw fail('key_not_allowed', `cannot sign CMS with an ${d.type} key`);
  }
}

/** A degenerate certificates-only SignedData (RFC 5652 §5.2, RFC 8894 §3.4), in the order given. */
export function buildCertsOnly(certs: Uint8Array[]): Buffer {
  return contentInfo(
    CMS_OID.signedData,
    sequence(
      integer(1),
      tlv(Tag.SET),
      sequence(oid(CMS_OID.data)),
      // In the given order: some clients take the first certificate for the CA.
      implicitConstructed(0, ...certs),
      tlv(Tag.SET),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Parsing

export interface CmsSignerInfo {
  version: number;
  sid: CmsIdentifier;
  /** digestAlgorithm OID (see {@link cmsDigestName}). */
  digestAlgorithm: string;
  /** Present when the SignerInfo has signed attributes. */
  signedAttributes?: CmsAttribute[];
  /** The signed attributes as the signature covers them (re-tagged as a SET OF). */
  signedAttributesDer?: Uint8Array;
  /** signatureAlgorithm OID. */
  signatureAlgorithm: string;
  signature: Uint8Array;
}

export interface ParsedSignedData {
  version: number;
  /** digestAlgorithms OIDs. */
  digestAlgorithms: string[];
  /** eContentType. */
  contentType: string;
  /** eContent octets; undefined when detached or absent. */
  content?: Uint8Array;
  /** X.509 certificates carried (DER), in message order; other certificate kinds are skipped. */
  certificates: Uint8Array[];
  signers: CmsSignerInfo[];
}

function readAttributes(der: Uint8Array, node: DerNode, what: string): CmsAttribute[] {
  return children(der, node).map((a) => {
    const [type, values, extra] = children(der, expectTag(a, Tag.SEQUENCE, what));
    if (extra) throw malformed(what, 'an attribute has unexpected fields');
    const vs = children(der, expectTag(values, Tag.SET, `${what}.values`)).map((v) => raw(der, v));
    return { type: readOid(der, type, `${what}.type`), values: vs };
  });
}

function readSignerInfo(der: Uint8Array, node: DerNode): CmsSignerInfo {
  const f = children(der, expectTag(node, Tag.SEQUENCE, 'SignerInfo'));
  let i = 0;
  const version = readSmallInteger(der, f[i++], 'SignerInfo.version');
  if (version !== 1 && version !== 3) throw malformed('SignerInfo.version', `unknown version ${version}`);
  const sidNode = f[i++];
  const sid: CmsIdentifier =
    sidNode?.tag === 0x80
      ? { subjectKeyIdentifier: content(der, sidNode) }
      : { issuerAndSerialNumber: readIssuerAndSerial(der, sidNode, 'SignerInfo.sid') };
  const digestAlgorithm = readAlgorithm(der, f[i++], 'SignerInfo.digestAlgorithm').oid;
  let signedAttributes: CmsAttribute[] | undefined;
  let signedAttributesDer: Uint8Array | undefined;
  if (f[i]?.tag === 0xa0) {
    const node = f[i++]!;
    signedAttributes = readAttributes(der, node, 'signedAttrs');
    const bytes = Buffer.from(raw(der, node));
    bytes[0] = Tag.SET;
    signedAttributesDer = bytes;
  }
  const signatureAlgorithm = readAlgorithm(der, f[i++], 'SignerInfo.signatureAlgorithm').oid;
  const signature = octets(der, f[i++], 'SignerInfo.signature');
  if (f[i]?.tag === 0xa1) i++; // unsignedAttrs
  if (i !== f.length) throw malformed('SignerInfo', 'unexpected fields');
  return {
    version,
    sid,
    digestAlgorithm,
    signedAttributes,
    signedAttributesDer,
    signatureAlgorithm,
    signature,
  };
}

/**
 * Parses a SignedData ContentInfo from outside (BER accepted, bounded first). Fails with
 * `malformed` or `too_large` only; nothing is verified here (see {@link verifySignerInfo}).
 */
export function parseSignedData(input: Uint8Array, limits?: Partial<DerBounds>): ParsedSignedData {
  const der = boundedDer(input, limits, 'signedData');
  const sd = children(
    der,
    expectTag(readContentInfo(der, CMS_OID.signedData, 'signedData'), Tag.SEQUENCE, 'SignedData'),
  );
  let i = 0;
  const version = readSmallInteger(der, sd[i++], 'SignedData.version');
  if (version < 1 || version > 5) throw malformed('SignedData.version', `unknown version ${version}`);
  const digestAlgorithms = children(der, expectTag(sd[i++], Tag.SET, 'digestAlgorithms')).map(
    (n) => readAlgorithm(der, n, 'digestAlgorithm').oid,
  );
  const encap = children(der, expectTag(sd[i++], Tag.SEQUENCE, 'encapContentInfo'));
  const contentType = readOid(der, encap[0], 'eContentType');
  let body: Uint8Array | undefined;
  if (encap[1]) {
    const inner = children(der, expectTag(encap[1], 0xa0, 'eContent'));
    if (inner.length !== 1) throw malformed('eContent', 'must hold one OCTET STRING');
    body = octets(der, inner[0], 'eContent');
  }
  if (encap.length > 2) throw malformed('encapContentInfo', 'unexpected fields');
  const certificates: Uint8Array[] = [];
  if (sd[i]?.tag === 0xa0) {
    for (const c of children(der, sd[i++]!)) if (c.tag === Tag.SEQUENCE) certificates.push(raw(der, c));
  }
  if (sd[i]?.tag === 0xa1) i++; // crls
  const signers = children(der, expectTag(sd[i++], Tag.SET, 'signerInfos')).map((n) =>
    readSignerInfo(der, n),
  );
  if (i !== sd.length) throw malformed('SignedData', 'unexpected fields');
  return { version, digestAlgorithms, contentType, content: body, certificates, signers };
}

/** The certificates of a (certificates-only) SignedData, in message order. */
export function parseCertsOnly(der: Uint8Array, limits?: Partial<DerBounds>): Uint8Array[] {
  return parseSignedData(der, limits).certificates;
}

/** The values of the attribute `type`, or an empty list. */
export function attributeValues(attributes: readonly CmsAttribute[] | undefined, type: string): Uint8Array[] {
  return attributes?.find((a) => a.type === type)?.values ?? [];
}

// ---------------------------------------------------------------------------------------------
// Verifying

function signatureOidFor(signer: CmsSignerInfo, digest: CmsDigest): string {
  switch (signer.signatureAlgorithm) {
    case CMS_OID.rsaEncryption:
      return RSA_SIGNATURE[digest];
    case OID.idEcPublicKey:
      return ECDSA_SIGNATURE[digest];
    default:
      // A combined algorithm (sha256WithRSAEncryption, ecdsa-with-SHA256, Ed25519); the
      // signature verifier knows which it accepts and refuses the rest.
      return signer.signatureAlgorithm;
  }
}

function singleValue(signer: CmsSignerInfo, type: string, name: string): Uint8Array {
  const matches = signer.signedAttributes!.filter((a) => a.type === type);
  if (matches.length !== 1 || matches[0]!.values.length !== 1) {
    throw fail('signature_invalid', `the signed attributes must hold exactly one ${name}`);
  }
  return matches[0]!.values[0]!;
}

export interface VerifiedSigner {
  certificate: CertificateInfo;
  digest: CmsDigest;
  /** The signingTime attribute, when present. */
  signingTime?: Date;
}

/**
 * Verifies one signer of a parsed SignedData against `certificateDer`: the certificate is the
 * one the SignerInfo names, its key passes the key check, contentType and messageDigest match
 * the content (`content` for detached signatures), and the signature verifies (RSA PKCS#1 v1.5
 * with SHA-1/256/384/512, ECDSA, Ed25519). Fails with `signature_invalid` when anything does
 * not match, `signature_algorithm_not_allowed` for an algorithm certwright does not accept, and
 * `key_rejected` / `malformed` for a certificate that is not usable.
 */
export function verifySignerInfo(
  signedData: ParsedSignedData,
  signer: CmsSignerInfo,
  certificateDer: Uint8Array,
  options: { content?: Uint8Array } = {},
): VerifiedSigner {
  const certificate = certificateInfo(certificateDer);
  if (!identifies(signer.sid, certificateDer)) {
    throw fail('signature_invalid', 'the certificate is not the one the signer names');
  }
  const digest = cmsDigestName(signer.digestAlgorithm);
  if (!digest)
    throw fail(
      'signature_algorithm_not_allowed',
      `digest algorithm ${signer.digestAlgorithm} is not supported`,
    );
  const body = signedData.content ?? options.content ?? new Uint8Array();
  let signed: Uint8Array = body;
  let signingTime: Date | undefined;
  if (signer.signedAttributes) {
    const ct = singleValue(signer, CMS_OID.contentType, 'contentType');
    if (readOid(ct, readRoot(ct), 'contentType') !== signedData.contentType) {
      throw fail('signature_invalid', 'the signed contentType differs from the content');
    }
    const md = singleValue(signer, CMS_OID.messageDigest, 'messageDigest');
    const expected = createHash(digest).update(body).digest();
    if (!Buffer.from(octets(md, readRoot(md), 'messageDigest')).equals(expected)) {
      throw fail('signature_invalid', 'the message digest does not match the content');
    }
    if (signer.signedAttributes.some((a) => a.type === CMS_OID.signingTime)) {
      const t = singleValue(signer, CMS_OID.signingTime, 'signingTime');
      signingTime = readTime(t, readRoot(t), 'signingTime');
    }
    signed = signer.signedAttributesDer!;
  }
  const signatureOid = signatureOidFor(signer, digest);
  if (signatureOid === OID.idEd25519 && digest !== 'sha512') {
    throw fail('signature_algorithm_not_allowed', 'Ed25519 CMS signatures pair with SHA-512 (RFC 8419)');
  }
  if (!verifySignature(signatureOid, certificatePublicKey(certificateDer), signed, signer.signature)) {
    throw fail('signature_invalid', 'the CMS signature does not verify');
  }
  return { certificate, digest, ...(signingTime ? { signingTime } : {}) };
}
