import { CertwrightError } from '../errors.js';
import {
  bitString,
  boolean,
  explicit,
  implicitPrimitive,
  integer,
  NULL,
  octetString,
  oid,
  sequence,
  sequenceOf,
  Tag,
  tlv,
} from './der.js';
import {
  children,
  content,
  type DerNode,
  expectTag,
  malformed,
  readNode,
  readOid,
  readRoot,
} from './der-reader.js';
import { bytesToIp, ipToBytes } from './ip.js';
import { EKU_OIDS, type ExtendedKeyUsage, OID } from './oids.js';

/**
 * Certificate extensions (RFC 5280 §4.2): encoders for everything the certificate builder
 * writes, and decoders for the ones certwright reads back from requests.
 */

export type SubjectAltName =
  | { type: 'dns'; value: string }
  | { type: 'ip'; value: string }
  | { type: 'email'; value: string }
  | { type: 'uri'; value: string };

/** A GeneralName certwright does not interpret (otherName, directoryName, …), kept as bytes. */
export interface OtherGeneralName {
  type: 'other';
  tag: number;
  der: Uint8Array;
}

export const KEY_USAGE_BITS = {
  digitalSignature: 0,
  contentCommitment: 1,
  keyEncipherment: 2,
  dataEncipherment: 3,
  keyAgreement: 4,
  keyCertSign: 5,
  cRLSign: 6,
  encipherOnly: 7,
  decipherOnly: 8,
} as const;

export type KeyUsage = keyof typeof KEY_USAGE_BITS;

/** A raw extension as found in a certificate or a request. */
export interface RawExtension {
  oid: string;
  critical: boolean;
  /** The content of extnValue: the DER of the extension's own value. */
  value: Uint8Array;
}

function badSan(value: string, message: string): CertwrightError {
  const shown = String(value).slice(0, 256);
  return new CertwrightError('validation_failed', `subject alternative name '${shown}': ${message}`, {
    fields: [{ field: 'san', message: `'${shown}': ${message}` }],
  });
}

const DNS_LABEL = /^(\*|[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)$/;

export function encodeGeneralName(san: SubjectAltName): Buffer {
  switch (san.type) {
    case 'dns': {
      const labels = san.value.split('.');
      if (san.value.length > 253 || labels.some((l, i) => !DNS_LABEL.test(l) || (l === '*' && i !== 0))) {
        throw badSan(san.value, 'not a valid DNS name');
      }
      return tlv(0x82, Buffer.from(san.value, 'latin1'));
    }
    case 'ip':
      return tlv(0x87, ipToBytes(san.value));
    case 'email':
      // The local part excludes '@', so a long run of them cannot make the match backtrack.
      if (!/^[\x21-\x3f\x41-\x7e]+@[\x21-\x7e]+$/.test(san.value))
        throw badSan(san.value, 'not an ASCII e-mail address');
      return tlv(0x81, Buffer.from(san.value, 'latin1'));
    case 'uri':
      if (!/^[A-Za-z][A-Za-z0-9+.-]*:[\x21-\x7e]+$/.test(san.value))
        throw badSan(san.value, 'not an absolute ASCII URI');
      return tlv(0x86, Buffer.from(san.value, 'latin1'));
    default:
      throw badSan(String((san as { value?: unknown }).value), 'unknown type');
  }
}

export function decodeGeneralName(buf: Uint8Array, node: DerNode): SubjectAltName | OtherGeneralName {
  const text = (): string => Buffer.from(content(buf, node)).toString('latin1');
  switch (node.tag) {
    case 0x81:
      return { type: 'email', value: text() };
    case 0x82:
      return { type: 'dns', value: text() };
    case 0x86:
      return { type: 'uri', value: text() };
    case 0x87: {
      const bytes = content(buf, node);
      if (bytes.length !== 4 && bytes.length !== 16)
        throw malformed('subjectAltName', 'iPAddress must be 4 or 16 bytes');
      return { type: 'ip', value: bytesToIp(bytes) };
    }
    default:
      return { type: 'other', tag: node.tag, der: buf.subarray(node.start, node.end) };
  }
}

export const subjectAltNameValue = (sans: readonly SubjectAltName[]): Buffer =>
  sequenceOf(sans.map(encodeGeneralName));

export function decodeSubjectAltName(value: Uint8Array): (SubjectAltName | OtherGeneralName)[] {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'subjectAltName');
  return children(value, root).map((n) => decodeGeneralName(value, n));
}

export function keyUsageValue(usages: readonly KeyUsage[]): Buffer {
  let highest = -1;
  const bytes = Buffer.alloc(2);
  for (const u of usages) {
    const bit = KEY_USAGE_BITS[u];
    if (bit === undefined) throw new CertwrightError('validation_failed', `unknown key usage '${u}'`);
    bytes[bit >> 3]! |= 0x80 >> (bit & 7);
    highest = Math.max(highest, bit);
  }
  if (highest < 0) throw new CertwrightError('validation_failed', 'key usage must name at least one usage');
  // DER: named bit lists drop trailing zero bits (X.690 §11.2.2).
  return bitString(bytes.subarray(0, (highest >> 3) + 1), 7 - (highest & 7));
}

export function decodeKeyUsage(value: Uint8Array): KeyUsage[] {
  const root = expectTag(readRoot(value), Tag.BIT_STRING, 'keyUsage');
  const bytes = content(value, root);
  const out: KeyUsage[] = [];
  for (const [name, bit] of Object.entries(KEY_USAGE_BITS) as [KeyUsage, number][]) {
    const byte = bytes[1 + (bit >> 3)];
    if (byte !== undefined && (byte & (0x80 >> (bit & 7))) !== 0) out.push(name);
  }
  return out;
}

export function extKeyUsageValue(ekus: readonly (ExtendedKeyUsage | string)[]): Buffer {
  return sequenceOf(
    ekus.map((e) => {
      const id = Object.hasOwn(EKU_OIDS, e) ? EKU_OIDS[e as ExtendedKeyUsage] : e;
      if (typeof id !== 'string' || !/^\d+(\.\d+)+$/.test(id))
        throw new CertwrightError('validation_failed', `unknown extended key usage '${String(e)}'`);
      return oid(id);
    }),
  );
}

const EKU_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(EKU_OIDS).map(([k, v]) => [v, k]),
);

/** Extended key usages, by name when known and by OID otherwise. */
export function decodeExtKeyUsage(value: Uint8Array): string[] {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'extKeyUsage');
  return children(value, root).map((n) => {
    const id = readOid(value, n, 'extKeyUsage');
    return EKU_NAMES[id] ?? id;
  });
}

export interface BasicConstraints {
  ca: boolean;
  pathLength?: number;
}

export function basicConstraintsValue(bc: BasicConstraints): Buffer {
  const parts: Buffer[] = [];
  if (bc.ca) parts.push(boolean(true));
  if (bc.ca && bc.pathLength !== undefined) {
    if (!Number.isInteger(bc.pathLength) || bc.pathLength < 0) {
      throw new CertwrightError('validation_failed', 'path length must be a non-negative integer');
    }
    parts.push(integer(bc.pathLength));
  }
  return sequence(...parts);
}

export function decodeBasicConstraints(value: Uint8Array): BasicConstraints {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'basicConstraints');
  const items = children(value, root);
  let ca = false;
  let i = 0;
  if (items[0]?.tag === Tag.BOOLEAN) {
    ca = content(value, items[0])[0] !== 0;
    i++;
  }
  const out: BasicConstraints = { ca };
  const pl = items[i];
  if (pl) {
    const bytes = content(value, expectTag(pl, Tag.INTEGER, 'basicConstraints.pathLenConstraint'));
    if (bytes.length > 2 || (bytes[0]! & 0x80) !== 0) throw malformed('basicConstraints', 'bad path length');
    out.pathLength = bytes.reduce((a, b) => a * 256 + b, 0);
  }
  return out;
}

export const subjectKeyIdentifierValue = (keyId: Uint8Array): Buffer => octetString(keyId);

/** AuthorityKeyIdentifier with only keyIdentifier ([0] IMPLICIT OCTET STRING). */
export const authorityKeyIdentifierValue = (keyId: Uint8Array): Buffer =>
  sequence(implicitPrimitive(0, keyId));

/**
 * The keyIdentifier of an AuthorityKeyIdentifier extension value (RFC 5280 §4.2.1.1), or null
 * when it names the authority only by issuer and serial.
 */
export function decodeAuthorityKeyIdentifier(value: Uint8Array): Uint8Array | null {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'authorityKeyIdentifier');
  for (const node of children(value, root)) {
    if (node.tag === 0x80) return content(value, node);
  }
  return null;
}

/** Reads the keyIdentifier of a SubjectKeyIdentifier extension value. */
export function decodeSubjectKeyIdentifier(value: Uint8Array): Uint8Array {
  return content(value, expectTag(readRoot(value), Tag.OCTET_STRING, 'subjectKeyIdentifier'));
}

const uriName = (uri: string): Buffer => encodeGeneralName({ type: 'uri', value: uri });

/** CRLDistributionPoints: one DistributionPoint per URL, each with a fullName URI. */
export function crlDistributionPointsValue(urls: readonly string[]): Buffer {
  // DistributionPointName is a CHOICE, so its [0] tag is explicit; fullName is [0] IMPLICIT SEQUENCE OF.
  return sequenceOf(urls.map((u) => sequence(explicit(0, tlv(0xa0, uriName(u))))));
}

/**
 * The URIs of a CRLDistributionPoints extension value (RFC 5280 §4.2.1.13): every fullName URI
 * of every distribution point; relative names, reasons and CRL issuers are not shown.
 */
export function decodeCrlDistributionPoints(value: Uint8Array): string[] {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'cRLDistributionPoints');
  const urls: string[] = [];
  for (const point of children(value, root)) {
    expectTag(point, Tag.SEQUENCE, 'cRLDistributionPoints');
    const name = children(value, point).find((n) => n.tag === 0xa0);
    if (!name) continue;
    // DistributionPointName is a CHOICE: [0] fullName (GeneralNames) or [1] a relative name.
    const fullName = children(value, name).find((n) => n.tag === 0xa0);
    if (!fullName) continue;
    for (const general of children(value, fullName)) {
      const decoded = decodeGeneralName(value, general);
      if (decoded.type === 'uri') urls.push(decoded.value);
    }
  }
  return urls;
}

/** The OCSP and CA-issuer URIs of an AuthorityInfoAccess extension value (RFC 5280 §4.2.2.1). */
export function decodeAuthorityInfoAccess(value: Uint8Array): { ocsp: string[]; caIssuers: string[] } {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'authorityInfoAccess');
  const out = { ocsp: [] as string[], caIssuers: [] as string[] };
  for (const access of children(value, root)) {
    const [method, location] = children(value, expectTag(access, Tag.SEQUENCE, 'authorityInfoAccess'));
    const id = readOid(value, method, 'authorityInfoAccess.accessMethod');
    if (!location) throw malformed('authorityInfoAccess', 'an access description without a location');
    const decoded = decodeGeneralName(value, location);
    if (decoded.type !== 'uri') continue;
    if (id === OID.idAdOcsp) out.ocsp.push(decoded.value);
    else if (id === OID.idAdCaIssuers) out.caIssuers.push(decoded.value);
  }
  return out;
}

/** The policy OIDs of a CertificatePolicies extension value (RFC 5280 §4.2.1.4), qualifiers left out. */
export function decodeCertificatePolicies(value: Uint8Array): string[] {
  const root = expectTag(readRoot(value), Tag.SEQUENCE, 'certificatePolicies');
  return children(value, root).map((info) => {
    const [policy] = children(value, expectTag(info, Tag.SEQUENCE, 'certificatePolicies'));
    return readOid(value, policy, 'certificatePolicies.policyIdentifier');
  });
}

export function authorityInfoAccessValue(aia: {
  ocsp?: readonly string[];
  caIssuers?: readonly string[];
}): Buffer {
  return sequenceOf([
    ...(aia.ocsp ?? []).map((u) => sequence(oid(OID.idAdOcsp), uriName(u))),
    ...(aia.caIssuers ?? []).map((u) => sequence(oid(OID.idAdCaIssuers), uriName(u))),
  ]);
}

/** TLS Feature (RFC 7633) with status_request (5): "must-staple". */
export const mustStapleValue = (): Buffer => sequence(integer(5));

/** id-pkix-ocsp-nocheck (RFC 6960 §4.2.2.2.1): the value is NULL. */
export const ocspNoCheckValue = (): Buffer => NULL;

/** id-ce-noRevAvail (RFC 9608 §2): the value is NULL. */
export const noRevAvailValue = (): Buffer => NULL;

/** Decodes an Extensions SEQUENCE into raw extensions, refusing duplicates (RFC 5280 §4.2). */
export function decodeExtensions(buf: Uint8Array, node: DerNode, field: string): RawExtension[] {
  const seen = new Set<string>();
  return children(buf, expectTag(node, Tag.SEQUENCE, field)).map((ext) => {
    const parts = children(buf, expectTag(ext, Tag.SEQUENCE, field));
    const id = readOid(buf, parts[0], `${field}.extnID`);
    let i = 1;
    let critical = false;
    if (parts[1]?.tag === Tag.BOOLEAN) {
      critical = content(buf, parts[1])[0] !== 0;
      i++;
    }
    const valueNode = expectTag(parts[i], Tag.OCTET_STRING, `${field}.extnValue`);
    if (parts.length !== i + 1) throw malformed(field, 'extra fields in an extension');
    if (seen.has(id)) throw malformed(field, `extension ${id} appears twice`);
    seen.add(id);
    const value = content(buf, valueNode);
    // Every extension value must itself be exactly one DER value.
    if (readNode(value, 0).end !== value.length) throw malformed(field, `extension ${id} has trailing bytes`);
    return { oid: id, critical, value };
  });
}
