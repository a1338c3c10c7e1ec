import { serialToHex } from '../certificate-info.js';
import { explicit, integer, oid, sequence, Tag } from '../der.js';
import {
  assertDerBounds,
  children,
  content,
  type DerBounds,
  type DerNode,
  expectTag,
  malformed,
  raw,
  readOid,
  readRoot,
  readUnsignedInteger,
} from '../der-reader.js';
import { normalizeBer } from './ber.js';
import { certificateInfo } from './certificate-cache.js';
import { cmsLimits } from './limits.js';

/**
 * Pieces every CMS structure shares: ContentInfo (RFC 5652 §3), IssuerAndSerialNumber (§10.2.4),
 * AlgorithmIdentifier reading, and the bounded entry into untrusted bytes.
 */

/** Untrusted CMS bytes made DER (see ber.ts) and checked against the bounds. */
export function boundedDer(
  input: Uint8Array,
  limits: Partial<DerBounds> | undefined,
  what: string,
): Uint8Array {
  const bounds = cmsLimits(limits);
  const der = normalizeBer(input, bounds, what);
  assertDerBounds(der, bounds, what);
  return der;
}

/** `ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT ANY }`. */
export const contentInfo = (contentType: string, inner: Uint8Array): Buffer =>
  sequence(oid(contentType), explicit(0, inner));

/** The node of a ContentInfo's content, checking its type. */
export function readContentInfo(der: Uint8Array, expectedType: string, what: string): DerNode {
  const parts = children(der, expectTag(readRoot(der), Tag.SEQUENCE, what));
  const type = readOid(der, parts[0], `${what}.contentType`);
  if (type !== expectedType) throw malformed(what, `content type ${type} is not ${expectedType}`);
  const wrapper = expectTag(parts[1], 0xa0, `${what}.content`);
  if (parts.length !== 2) throw malformed(what, 'unexpected fields');
  const inner = children(der, wrapper);
  if (inner.length !== 1) throw malformed(`${what}.content`, 'must hold exactly one value');
  return inner[0]!;
}

/** An issuer name (exact DER bytes) and a serial number (lowercase hex, no leading zeros). */
export interface IssuerAndSerialNumber {
  issuer: Uint8Array;
  serialNumber: string;
}

/** How a signer or a recipient is named (RFC 5652 §5.3 SignerIdentifier, §6.2.1 RecipientIdentifier). */
export type CmsIdentifier =
  | { issuerAndSerialNumber: IssuerAndSerialNumber }
  | { subjectKeyIdentifier: Uint8Array };

export function readIssuerAndSerial(
  der: Uint8Array,
  node: DerNode | undefined,
  what: string,
): IssuerAndSerialNumber {
  const parts = children(der, expectTag(node, Tag.SEQUENCE, what));
  if (parts.length !== 2) throw malformed(what, 'must hold an issuer and a serial number');
  const issuer = raw(der, expectTag(parts[0], Tag.SEQUENCE, `${what}.issuer`));
  return { issuer, serialNumber: serialToHex(readUnsignedInteger(der, parts[1], `${what}.serialNumber`)) };
}

/** IssuerAndSerialNumber naming `certificate` (its issuer bytes and serial, as written in it). */
export function issuerAndSerialOf(certificate: Uint8Array): Buffer {
  const cert = certificateInfo(certificate);
  const hex = cert.serialNumber.length % 2 === 0 ? cert.serialNumber : `0${cert.serialNumber}`;
  return sequence(cert.issuer.der, integer(Buffer.from(hex, 'hex')));
}

/** Whether `id` names the certificate (issuer bytes and serial, or its subject key identifier). */
export function identifies(id: CmsIdentifier, certificate: Uint8Array): boolean {
  const cert = certificateInfo(certificate);
  if ('issuerAndSerialNumber' in id) {
    return (
      id.issuerAndSerialNumber.serialNumber === cert.serialNumber &&
      Buffer.from(id.issuerAndSerialNumber.issuer).equals(Buffer.from(cert.issuer.der))
    );
  }
  return Buffer.from(id.subjectKeyIdentifier).equals(Buffer.from(cert.keyIdentifier));
}

/** An AlgorithmIdentifier: its OID and the parameters' TLV (undefined when absent). */
export interface AlgorithmIdentifier {
  oid: string;
  parameters?: Uint8Array;
}

export function readAlgorithm(der: Uint8Array, node: DerNode | undefined, what: string): AlgorithmIdentifier {
  const parts = children(der, expectTag(node, Tag.SEQUENCE, what));
  if (parts.length < 1 || parts.length > 2)
    throw malformed(what, 'must hold an algorithm and optional parameters');
  const algorithm = readOid(der, parts[0], `${what}.algorithm`);
  return parts[1] ? { oid: algorithm, parameters: raw(der, parts[1]) } : { oid: algorithm };
}

/** Parameters absent or NULL (what RFC 3370/4055 allow for hash and rsaEncryption identifiers). */
export function parametersAbsentOrNull(alg: AlgorithmIdentifier): boolean {
  return (
    !alg.parameters ||
    (alg.parameters.length === 2 && alg.parameters[0] === Tag.NULL && alg.parameters[1] === 0)
  );
}

/** Content octets of a primitive OCTET STRING node. */
export const octets = (der: Uint8Array, node: DerNode | undefined, what: string): Uint8Array =>
  content(der, expectTag(node, Tag.OCTET_STRING, what));
