import { createHash } from 'node:crypto';
import { CertwrightError, isCertwrightError } from '../errors.js';
import { type CertificateInfo, serialToHex } from './certificate-info.js';
import { algorithmIdentifier, NULL, octetString, sequence, Tag, tlvOf } from './der.js';
import {
  assertDerBounds,
  children,
  content,
  expectTag,
  raw,
  readOid,
  readRoot,
  readUnsignedInteger,
} from './der-reader.js';
import { decodeExtensions, type RawExtension } from './extensions.js';
import { OID } from './oids.js';

/** OCSP requests (RFC 6960 §4.1) and CertID matching. */

export type CertIdHash = 'sha1' | 'sha256' | 'sha384' | 'sha512';

const HASH_BY_OID: Record<string, CertIdHash> = {
  [OID.idSha1]: 'sha1',
  [OID.idSha256]: 'sha256',
  [OID.idSha384]: 'sha384',
  [OID.idSha512]: 'sha512',
};
const OID_BY_HASH: Record<CertIdHash, string> = {
  sha1: OID.idSha1,
  sha256: OID.idSha256,
  sha384: OID.idSha384,
  sha512: OID.idSha512,
};

export interface OcspCertId {
  /** The CertID exactly as received; responses echo these bytes so clients match them. */
  der: Uint8Array;
  hashAlgorithmOid: string;
  /** Undefined for a hash algorithm certwright does not compute (answered `unknown`). */
  hash: CertIdHash | undefined;
  issuerNameHash: Uint8Array;
  issuerKeyHash: Uint8Array;
  /** Lowercase hex without leading zeros. */
  serialNumber: string;
}

export interface OcspRequest {
  certIds: OcspCertId[];
  /** extnValue of the nonce extension (RFC 8954), echoed verbatim in the response. */
  nonce: Uint8Array | undefined;
  /** Whether the request carried optionalSignature (certwright does not require signed requests). */
  signed: boolean;
  extensions: RawExtension[];
}

/**
 * A request certwright cannot parse. The OCSP protocol layer answers it with the
 * `malformedRequest` response status (RFC 6960 §2.3) instead of an HTTP error.
 */
export class OcspRequestError extends CertwrightError {
  readonly responseStatus = 'malformedRequest' as const;
  constructor(reason: string, cause?: unknown) {
    super('bad_request', `malformed OCSP request: ${reason}`, {
      cause,
      extra: { ocsp_response_status: 'malformedRequest' },
    });
  }
}

export interface OcspRequestLimits {
  /** Size of a POSTed request. */
  maxBytes: number;
  /** CertIDs per request: each costs a status lookup; RFC 5019 clients send exactly one. */
  maxCertIds: number;
  /**
   * Octets of the nonce (RFC 8954 §2.1: 1 to 32, larger is malformedRequest). The nonce is
   * echoed and signed, and makes the answer uncacheable.
   */
  maxNonceBytes: number;
}

/**
 * A real request is 70–200 bytes (one SHA-1 or SHA-256 CertID, a 16- or 32-octet nonce);
 * 16 KiB leaves room for a signed request carrying its certificates. Eight CertIDs allow a
 * scripted `openssl ocsp` with several `-serial`s while keeping one request to a handful of
 * lookups.
 */
export const DEFAULT_OCSP_REQUEST_LIMITS: Readonly<OcspRequestLimits> = Object.freeze({
  maxBytes: 16 * 1024,
  maxCertIds: 8,
  maxNonceBytes: 32,
});

/**
 * Nodes and depth of a request: a signed request may carry certificates in its
 * optionalSignature (a few hundred values each, about 12 levels deep).
 */
const OCSP_REQUEST_SHAPE = { maxNodes: 2_000, maxDepth: 12 };

/** Parses a DER OCSPRequest; every failure is an OcspRequestError. */
export function parseOcspRequest(
  der: Uint8Array,
  limits: Partial<OcspRequestLimits> = DEFAULT_OCSP_REQUEST_LIMITS,
): OcspRequest {
  const { maxBytes, maxCertIds, maxNonceBytes } = { ...DEFAULT_OCSP_REQUEST_LIMITS, ...limits };
  try {
    assertDerBounds(der, { maxBytes, ...OCSP_REQUEST_SHAPE }, 'OCSP request');
    const root = expectTag(readRoot(der), Tag.SEQUENCE, 'OCSPRequest');
    const [tbsNode, sigNode, extra] = children(der, root);
    if (extra || (sigNode && sigNode.tag !== 0xa0))
      throw new OcspRequestError('unexpected fields after tbsRequest');
    const tbs = children(der, expectTag(tbsNode, Tag.SEQUENCE, 'tbsRequest'));
    let i = 0;
    if (tbs[i]?.tag === 0xa0) {
      const [v] = children(der, tbs[i]!);
      const version = content(der, expectTag(v, Tag.INTEGER, 'version'));
      if (version.length !== 1 || version[0] !== 0) throw new OcspRequestError('unsupported version');
      i++;
    }
    if (tbs[i]?.tag === 0xa1) i++; // requestorName: informational only
    const list = children(der, expectTag(tbs[i++], Tag.SEQUENCE, 'requestList'));
    if (list.length === 0) throw new OcspRequestError('empty requestList');
    if (list.length > maxCertIds) throw new OcspRequestError(`more than ${maxCertIds} CertIDs`);
    let extensions: RawExtension[] = [];
    if (tbs[i]?.tag === 0xa2) {
      extensions = decodeExtensions(der, children(der, tbs[i]!)[0]!, 'requestExtensions');
      i++;
    }
    if (i !== tbs.length) throw new OcspRequestError('unexpected fields in tbsRequest');

    const certIds = list.map((req) => {
      const [certIdNode] = children(der, expectTag(req, Tag.SEQUENCE, 'Request'));
      const parts = children(der, expectTag(certIdNode, Tag.SEQUENCE, 'CertID'));
      if (parts.length !== 4) throw new OcspRequestError('CertID must have four fields');
      const algParts = children(der, expectTag(parts[0], Tag.SEQUENCE, 'CertID.hashAlgorithm'));
      const hashAlgorithmOid = readOid(der, algParts[0], 'CertID.hashAlgorithm');
      return {
        der: raw(der, certIdNode!),
        hashAlgorithmOid,
        hash: HASH_BY_OID[hashAlgorithmOid],
        issuerNameHash: content(der, expectTag(parts[1], Tag.OCTET_STRING, 'CertID.issuerNameHash')),
        issuerKeyHash: content(der, expectTag(parts[2], Tag.OCTET_STRING, 'CertID.issuerKeyHash')),
        serialNumber: serialToHex(readUnsignedInteger(der, parts[3], 'CertID.serialNumber')),
      };
    });
    const nonceExt = extensions.find((e) => e.oid === OID.idPkixOcspNonce);
    if (nonceExt) checkNonce(nonceExt.value, maxNonceBytes);
    return { certIds, nonce: nonceExt?.value, signed: sigNode !== undefined, extensions };
  } catch (cause) {
    if (cause instanceof OcspRequestError) throw cause;
    throw new OcspRequestError(isCertwrightError(cause) ? cause.message : 'unparsable DER', cause);
  }
}

/** RFC 8954 §2.1: `Nonce ::= OCTET STRING (SIZE(1..32))` inside extnValue. */
function checkNonce(value: Uint8Array, maxNonceBytes: number): void {
  const node = readRoot(value);
  if (node.tag !== Tag.OCTET_STRING) throw new OcspRequestError('the nonce must be an OCTET STRING');
  const length = node.end - node.contentStart;
  if (length < 1 || length > maxNonceBytes)
    throw new OcspRequestError(`a nonce of ${length} octets is outside 1–${maxNonceBytes}`);
}

/** issuerNameHash and issuerKeyHash of a CA for one hash algorithm (RFC 6960 §4.1.1). */
export interface IssuerHashes {
  nameHash: Buffer;
  keyHash: Buffer;
}

export function issuerHashes(issuer: CertificateInfo, hash: CertIdHash): IssuerHashes {
  return {
    nameHash: createHash(hash).update(issuer.subject.der).digest(),
    // The key hash covers the subjectPublicKey BIT STRING value, without tag, length and unused-bits octet.
    keyHash: createHash(hash).update(issuer.publicKeyBits).digest(),
  };
}

/**
 * Precomputes an issuer's hashes for every supported algorithm, so matching a CertID is two
 * buffer comparisons.
 */
export function certIdMatcher(issuer: CertificateInfo): (certId: OcspCertId) => boolean {
  const table = new Map<CertIdHash, IssuerHashes>(
    (['sha1', 'sha256', 'sha384', 'sha512'] as const).map((h) => [h, issuerHashes(issuer, h)]),
  );
  return (certId) => {
    const h = certId.hash && table.get(certId.hash);
    return !!h && h.nameHash.equals(certId.issuerNameHash) && h.keyHash.equals(certId.issuerKeyHash);
  };
}

/** Builds a CertID for one of the issuer's certificates (used for `/serial/{hex}` lookups). */
export function buildCertId(
  issuer: CertificateInfo,
  serialNumber: string,
  hash: CertIdHash = 'sha1',
): OcspCertId {
  const { nameHash, keyHash } = issuerHashes(issuer, hash);
  const hex = serialNumber.toLowerCase().replace(/^0+(?=.)/, '');
  const magnitude = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  const serialTlv = tlvOf(Tag.INTEGER, [
    magnitude[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), magnitude]) : magnitude,
  ]);
  // RFC 5754: SHA-2 AlgorithmIdentifiers should omit parameters; openssl writes NULL for SHA-1.
  const alg =
    hash === 'sha1' ? algorithmIdentifier(OID.idSha1, NULL) : algorithmIdentifier(OID_BY_HASH[hash]);
  return {
    der: sequence(alg, octetString(nameHash), octetString(keyHash), serialTlv),
    hashAlgorithmOid: OID_BY_HASH[hash],
    hash,
    issuerNameHash: nameHash,
    issuerKeyHash: keyHash,
    serialNumber: hex,
  };
}
