import type { KeyObject } from 'node:crypto';
import { bitString, extension, integer, oid, sequence, setOf, tlv, utf8String } from './der.js';
import { type RawExtension, type SubjectAltName, subjectAltNameValue } from './extensions.js';
import { exportSpkiDer } from './keys.js';
import { type DistinguishedName, encodeName } from './name.js';
import { OID } from './oids.js';
import { pemEncode } from './pem.js';
import { signatureAlgorithmFor, signData } from './signature.js';

/** PKCS#10 writer (RFC 2986), for agents and clients that generate their own keys. */

export interface CertificationRequestTemplate {
  subject: DistinguishedName;
  privateKey: KeyObject;
  subjectAltNames?: readonly SubjectAltName[];
  /** Requested extensions besides subjectAltName, written into extensionRequest. */
  extensions?: readonly RawExtension[];
  challengePassword?: string;
  /** Further attributes: type OID and the DER of each value. */
  attributes?: readonly { oid: string; values: readonly Uint8Array[] }[];
}

export function createCertificationRequest(t: CertificationRequestTemplate): Buffer {
  const attrs: Buffer[] = [];
  if (t.challengePassword !== undefined)
    attrs.push(sequence(oid(OID.challengePassword), setOf(utf8String(t.challengePassword))));
  const exts: Buffer[] = [];
  if (t.subjectAltNames?.length)
    exts.push(extension(OID.subjectAltName, false, subjectAltNameValue(t.subjectAltNames)));
  for (const e of t.extensions ?? []) exts.push(extension(e.oid, e.critical, e.value));
  if (exts.length) attrs.push(sequence(oid(OID.extensionRequest), setOf(sequence(...exts))));
  for (const a of t.attributes ?? []) attrs.push(sequence(oid(a.oid), setOf(...a.values)));
  const info = sequence(
    integer(0),
    encodeName(t.subject),
    exportSpkiDer(t.privateKey),
    // attributes is [0] IMPLICIT SET OF: DER order applies to its elements as well.
    tlv(0xa0, ...[...attrs].sort(Buffer.compare)),
  );
  const alg = signatureAlgorithmFor(t.privateKey);
  return sequence(info, alg.identifier, bitString(signData(alg, t.privateKey, info)));
}

export const certificationRequestToPem = (der: Uint8Array): string => pemEncode('CERTIFICATE REQUEST', der);
