import { CertwrightError, isCertwrightError } from '../errors.js';
import { Tag } from './der.js';
import {
  assertDerBounds,
  children,
  type DerBounds,
  expectTag,
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
import { describePublicKey, importSpkiDer, type PublicKeyDescription } from './keys.js';
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

const refuse = (reason: string, message: string, cause?: unknown): CertwrightError =>
  new CertwrightError('validation_failed', `certificate request refused: ${message}`, {
    cause,
    extra: { reason },
    fields: [{ field: 'csr', message }],
  });

/** Turns PEM, base64 (EST wraps it with CRLF) or DER into DER, bounded by `maxBytes`. */
function toDer(input: Uint8Array | string, maxBytes: number): Uint8Array {
  // Text forms are at most ~4/3 of the DER plus line breaks; refuse before decoding anything.
  const tooLarge = (): CertwrightError =>
    new CertwrightError('bad_request', `certificate request exceeds the ${maxBytes}-byte limit`, {
      extra: { reason: 'too_large' },
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
 * Parses and verifies a PKCS#10 request. Structural problems → `bad_request`; a request that
 * parses but must not be honoured (bad signature, unknown critical extension, unsupported key)
 * → `validation_failed`. `extra.reason` carries a stable machine-readable reason.
 */
export function parseCertificationRequest(
  input: Uint8Array | string,
  limits: CsrLimits = DEFAULT_CSR_LIMITS,
): CertificationRequest {
  const der = toDer(input, limits.maxBytes);
  assertDerBounds(der, limits, 'certificate request');
  try {
    const root = expectTag(readRoot(der), Tag.SEQUENCE, 'CertificationRequest');
    const [infoNode, algNode, sigNode, extra] = children(der, root);
    if (extra) throw new CertwrightError('bad_request', 'CertificationRequest: unexpected trailing field');
    const info = children(der, expectTag(infoNode, Tag.SEQUENCE, 'certificationRequestInfo'));
    if (readSmallInteger(der, info[0], 'version') !== 0)
      throw new CertwrightError('bad_request', 'CertificationRequest: version must be 0 (v1)');
    const subject = decodeName(der, info[1], 'subject');
    const spki = raw(der, expectTag(info[2], Tag.SEQUENCE, 'subjectPKInfo'));
    const attrsNode = expectTag(info[3], 0xa0, 'attributes');
    if (info.length !== 4)
      throw new CertwrightError('bad_request', 'certificationRequestInfo: unexpected fields');

    const sigAlgOid = readOid(
      der,
      children(der, expectTag(algNode, Tag.SEQUENCE, 'signatureAlgorithm'))[0],
      'signatureAlgorithm',
    );
    const signature = readBitStringBytes(der, sigNode, 'signature');

    let publicKey: PublicKeyDescription;
    let key: ReturnType<typeof importSpkiDer>;
    try {
      key = importSpkiDer(spki);
      publicKey = describePublicKey(key);
    } catch (cause) {
      throw refuse('unsupported_key', 'the public key is invalid or of an unsupported type', cause);
    }
    const algName = signatureAlgorithmName(sigAlgOid);
    if (!algName)
      throw refuse('unsupported_signature_algorithm', `signature algorithm ${sigAlgOid} is not supported`);
    let ok: boolean;
    try {
      ok = verifySignature(sigAlgOid, key, raw(der, infoNode!), signature);
    } catch (cause) {
      throw refuse('bad_signature', `the signature algorithm ${algName} does not match the key`, cause);
    }
    if (!ok)
      throw refuse(
        'bad_signature',
        'the signature does not verify with the request public key (proof of possession failed)',
      );

    const attributeOids: string[] = [];
    let extensions: RawExtension[] = [];
    let challengePassword: string | undefined;
    for (const attr of children(der, attrsNode)) {
      const [typeNode, valuesNode] = children(der, expectTag(attr, Tag.SEQUENCE, 'attribute'));
      const type = readOid(der, typeNode, 'attribute.type');
      if (attributeOids.includes(type))
        throw new CertwrightError('bad_request', `attribute ${type} appears twice`);
      attributeOids.push(type);
      const values = children(der, expectTag(valuesNode, Tag.SET, 'attribute.values'));
      if (type === OID.extensionRequest) {
        if (values.length !== 1)
          throw new CertwrightError('bad_request', 'extensionRequest must hold exactly one value');
        extensions = decodeExtensions(der, values[0]!, 'extensionRequest');
      } else if (type === OID.challengePassword) {
        if (values.length !== 1)
          throw new CertwrightError('bad_request', 'challengePassword must hold exactly one value');
        challengePassword = readString(der, values[0], 'challengePassword');
      }
    }

    for (const e of extensions) {
      if (e.critical && !UNDERSTOOD_EXTENSIONS.has(e.oid)) {
        throw refuse(
          'unknown_critical_extension',
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
  } catch (cause) {
    if (isCertwrightError(cause)) throw cause;
    throw new CertwrightError('bad_request', 'certificate request is not valid DER', {
      cause,
      extra: { reason: 'malformed' },
    });
  }
}
