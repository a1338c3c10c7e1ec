import { type CertwrightError, type FailureReason, fail, isCertwrightError } from '../errors.js';
import { Tag } from './der.js';
import {
  assertDerBounds,
  children,
  type DerBounds,
  expectTag,
  malformed,
  raw,
  readBitStringBytes,
  readOid,
  readRoot,
  readSmallInteger,
  readString,
} from './der-reader.js';
import {
  type BasicConstraints,
  decodeBasicConstraints,
  decodeExtensions,
  decodeExtKeyUsage,
  decodeKeyUsage,
  decodeSubjectAltName,
  type KeyUsage,
  type OtherGeneralName,
  type RawExtension,
  type SubjectAltName,
} from './extensions.js';
import { checkSubjectPublicKeyInfo, type PublicKeyDescription } from './key-check.js';
import { importSpkiDer } from './keys.js';
import { type DecodedName, decodeName } from './name.js';
import { OID } from './oids.js';
import { decodeBase64Strict, pemDecode } from './pem.js';
import { signatureAlgorithmName, verifySignature } from './signature.js';

/** PKCS#10 certification requests (RFC 2986) from untrusted clients (EST, SCEP, ACME, REST). */

export interface CertificationRequest {
  der: Uint8Array;
  subject: DecodedName;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  publicKey: PublicKeyDescription;
  /** Name of the (verified) signature algorithm, e.g. `ecdsa-with-SHA256`. */
  signatureAlgorithm: string;
  /** Extensions from the extensionRequest attribute, in request order. */
  extensions: RawExtension[];
  subjectAltNames: (SubjectAltName | OtherGeneralName)[];
  keyUsage?: KeyUsage[];
  extendedKeyUsage?: string[];
  basicConstraints?: BasicConstraints;
  mustStaple: boolean;
  challengePassword?: string;
  /** OIDs of every attribute present, in request order. */
  attributeOids: string[];
}

export interface CsrLimits extends DerBounds {}

/**
 * A real CSR is 0.3–4 KiB; 64 KiB leaves room for thousands of SANs. The node and depth caps
 * stop hostile nesting before any decoder walks it (a normal CSR nests about 8 levels).
 */
export const DEFAULT_CSR_LIMITS: CsrLimits = { maxBytes: 64 * 1024, maxNodes: 10_000, maxDepth: 24 };

/** Extensions certwright understands in a request; any other one marked critical is refused. */
const UNDERSTOOD_EXTENSIONS = new Set<string>([
  OID.subjectAltName,
  OID.keyUsage,
  OID.extKeyUsage,
  OID.basicConstraints,
  OID.subjectKeyIdentifier,
  OID.tlsFeature,
]);

const refuse = (reason: FailureReason, message: string, cause?: unknown): CertwrightError =>
  fail(reason, `certificate request refused: ${message}`, {
    cause,
    fields: [{ field: 'csr', message }],
  });

/**
 * A failure while reading the request, as the request's own failure: bytes that do not parse
 * are `csr_malformed` (ACME's badCSR, not a generic malformed message); a refused key keeps
 * its reason but names the `csr` field.
 */
function asCsrFailure(cause: unknown): CertwrightError {
  if (!isCertwrightError(cause)) return refuse('csr_malformed', 'the request is not valid DER', cause);
  if (cause.reason === 'malformed') return refuse('csr_malformed', cause.message, cause);
  if (cause.reason === 'key_rejected' && cause.fields.length === 0)
    return refuse('key_rejected', cause.message, cause);
  return cause;
}

/** Turns PEM, base64 (EST wraps it with CRLF) or DER into DER, bounded by `maxBytes`. */
function toDer(input: Uint8Array | string, maxBytes: number): Uint8Array {
  // Text forms are at most ~4/3 of the DER plus line breaks; refuse before decoding anything.
  const tooLarge = (): CertwrightError =>
    fail('too_large', `certificate request exceeds the ${maxBytes}-byte limit`, {
      fields: [{ field: 'csr', message: `larger than ${maxBytes} bytes` }],
    });
  if (typeof input !== 'string' && input[0] === 0x30) {
    if (input.length > maxBytes) throw tooLarge();
    return input;
  }
  if (input.length > maxBytes * 2) throw tooLarge();
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
  if (text.includes('-----BEGIN')) return pemDecode(text, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']);
  return decodeBase64Strict(text, 'certificate request');
}

/**
 * Parses and verifies a PKCS#10 request. Every failure is a `CertwrightError` whose `reason`
 * says what is wrong: `too_large`, `csr_malformed` (does not parse), `key_rejected` (unsafe or
 * unsupported key, checked from the bytes before node:crypto sees them),
 * `signature_algorithm_not_allowed`, `csr_signature_invalid` (no proof of possession),
 * `extension_not_allowed` (a critical extension certwright does not understand).
 */
export function parseCertificationRequest(
  input: Uint8Array | string,
  limits: CsrLimits = DEFAULT_CSR_LIMITS,
): CertificationRequest {
  if (typeof input !== 'string') {
    const known = PARSED.get(input);
    if (known !== undefined && known.limits === limits && known.bytes.equals(input)) return known.request;
  }
  let request: CertificationRequest;
  try {
    request = parse(toDer(input, limits.maxBytes), limits);
  } catch (cause) {
    throw asCsrFailure(cause);
  }
  // A protocol front end (SCEP, EST) reads the request for its own checks and hands `der` on to
  // the enrollment pipeline, which parses it again: the second parse of the very same, unchanged
  // bytes answers from here instead of importing the key and verifying the signature twice.
  PARSED.set(request.der, { bytes: Buffer.from(request.der), limits, request });
  return request;
}

/** Requests parsed so far, by the DER array they were returned with (held only while it lives). */
const PARSED = new WeakMap<Uint8Array, { bytes: Buffer; limits: CsrLimits; request: CertificationRequest }>();

function parse(der: Uint8Array, limits: CsrLimits): CertificationRequest {
  assertDerBounds(der, limits, 'certificate request');
  const root = expectTag(readRoot(der), Tag.SEQUENCE, 'CertificationRequest');
  const [infoNode, algNode, sigNode, extra] = children(der, root);
  if (extra) throw malformed('CertificationRequest', 'unexpected trailing field');
  const info = children(der, expectTag(infoNode, Tag.SEQUENCE, 'certificationRequestInfo'));
  if (readSmallInteger(der, info[0], 'version') !== 0)
    throw malformed('CertificationRequest', 'version must be 0 (v1)');
  const subject = decodeName(der, info[1], 'subject');
  const spki = raw(der, expectTag(info[2], Tag.SEQUENCE, 'subjectPKInfo'));
  const attrsNode = expectTag(info[3], 0xa0, 'attributes');
  if (info.length !== 4) throw malformed('certificationRequestInfo', 'unexpected fields');

  const sigAlgOid = readOid(
    der,
    children(der, expectTag(algNode, Tag.SEQUENCE, 'signatureAlgorithm'))[0],
    'signatureAlgorithm',
  );
  const signature = readBitStringBytes(der, sigNode, 'signature');

  // The key is checked from its bytes before node:crypto sees it (see key-check.ts).
  const publicKey = checkSubjectPublicKeyInfo(spki);
  const key = importSpkiDer(spki);
  const algName = signatureAlgorithmName(sigAlgOid);
  if (!algName)
    throw refuse('signature_algorithm_not_allowed', `signature algorithm ${sigAlgOid} is not supported`);
  let ok: boolean;
  try {
    ok = verifySignature(sigAlgOid, key, raw(der, infoNode!), signature);
  } catch (cause) {
    throw refuse('csr_signature_invalid', `the signature algorithm ${algName} does not match the key`, cause);
  }
  if (!ok)
    throw refuse(
      'csr_signature_invalid',
      'the signature does not verify with the request public key (proof of possession failed)',
    );

  const attributeOids: string[] = [];
  let extensions: RawExtension[] = [];
  let challengePassword: string | undefined;
  for (const attr of children(der, attrsNode)) {
    const [typeNode, valuesNode] = children(der, expectTag(attr, Tag.SEQUENCE, 'attribute'));
    const type = readOid(der, typeNode, 'attribute.type');
    if (attributeOids.includes(type)) throw malformed('attributes', `attribute ${type} appears twice`);
    attributeOids.push(type);
    const values = children(der, expectTag(valuesNode, Tag.SET, 'attribute.values'));
    if (type === OID.extensionRequest) {
      if (values.length !== 1) throw malformed('extensionRequest', 'must hold exactly one value');
      extensions = decodeExtensions(der, values[0]!, 'extensionRequest');
    } else if (type === OID.challengePassword) {
      if (values.length !== 1) throw malformed('challengePassword', 'must hold exactly one value');
      challengePassword = readString(der, values[0], 'challengePassword');
    }
  }

  for (const e of extensions) {
    if (e.critical && !UNDERSTOOD_EXTENSIONS.has(e.oid)) {
      throw refuse(
        'extension_not_allowed',
        `it requests the critical extension ${e.oid}, which certwright does not understand`,
      );
    }
  }
  const find = (oid: string): RawExtension | undefined => extensions.find((e) => e.oid === oid);
  const san = find(OID.subjectAltName);
  const ku = find(OID.keyUsage);
  const eku = find(OID.extKeyUsage);
  const bc = find(OID.basicConstraints);
  const result: CertificationRequest = {
    der,
    subject,
    spki,
    publicKey,
    signatureAlgorithm: algName,
    extensions,
    subjectAltNames: san ? decodeSubjectAltName(san.value) : [],
    mustStaple: find(OID.tlsFeature) !== undefined,
    attributeOids,
  };
  if (ku) result.keyUsage = decodeKeyUsage(ku.value);
  if (eku) result.extendedKeyUsage = decodeExtKeyUsage(eku.value);
  if (bc) result.basicConstraints = decodeBasicConstraints(bc.value);
  if (challengePassword !== undefined) result.challengePassword = challengePassword;
  return result;
}
