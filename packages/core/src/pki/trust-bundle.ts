import { type CertwrightError, fail, isCertwrightError } from '../errors.js';
import { type CertificateInfo, readCertificate } from './certificate-info.js';
import { Tag } from './der.js';
import { children, expectTag, raw, readBitStringBytes, readOid, readRoot } from './der-reader.js';
import {
  type BasicConstraints,
  decodeBasicConstraints,
  decodeExtKeyUsage,
  decodeKeyUsage,
  type KeyUsage,
} from './extensions.js';
import { OID } from './oids.js';
import { pemDecodeAll } from './pem.js';
import { verifySignature } from './signature.js';

/**
 * Trust bundles for TLS client certificates: the mutual-TLS routes of EST and SCEP accept a
 * client whose chain leads to one of the CA certificates in a PEM file the operator names.
 *
 * Path validation is the part of RFC 5280 §6 an enrollment server needs: issuer and subject
 * names compared as DER bytes, every signature verified, validity at `now` for each
 * certificate (anchors included), `cA` and `keyCertSign` for every issuer, path length
 * constraints, and for the leaf the `clientAuth` purpose (an EKU extension must allow it, a key
 * usage extension must allow `digitalSignature`). Name constraints, policies and revocation are
 * not checked. Untrusted certificates pass `readCertificate` (bounded, key checked from its
 * bytes) before node:crypto sees their keys.
 */

export interface TrustAnchor extends Issuer {
  der: Uint8Array;
}

export interface TrustBundleLimits {
  /** Characters of PEM text read. */
  maxChars: number;
  /** Certificates in one bundle. */
  maxAnchors: number;
}

/** The Mozilla root store is about 150 certificates and 220 KB of PEM. */
export const DEFAULT_TRUST_BUNDLE_LIMITS: Readonly<TrustBundleLimits> = Object.freeze({
  maxChars: 2 * 1024 * 1024,
  maxAnchors: 500,
});

/** Certificates a TLS client may present (leaf and intermediates); real chains have 1–4. */
export const MAX_CLIENT_CHAIN_LENGTH = 8;

/**
 * Reads a PEM bundle of CA certificates. Refuses (reason `invalid_input`, or the parser's
 * `malformed`/`too_large`/`key_rejected`) a text without certificates, other PEM blocks and
 * certificates that are not CAs, naming the offending certificate by position and subject.
 */
export function parseTrustBundle(
  pem: string,
  limits: TrustBundleLimits = DEFAULT_TRUST_BUNDLE_LIMITS,
): TrustAnchor[] {
  const blocks = pemDecodeAll(pem, { maxChars: limits.maxChars, maxBlocks: limits.maxAnchors });
  if (blocks.length === 0) throw fail('invalid_input', 'the trust bundle holds no PEM certificate');
  return blocks.map((block, index) => {
    const position = `certificate ${index + 1}`;
    if (block.label !== 'CERTIFICATE') {
      throw fail('invalid_input', `${position} of the trust bundle is a ${block.label}, not a CERTIFICATE`);
    }
    let anchor: TrustAnchor;
    try {
      const info = readCertificate(block.der);
      anchor = { der: block.der, info, ...constraintsOf(info) };
    } catch (cause) {
      if (!isCertwrightError(cause)) throw cause;
      throw fail(cause.reason, `${position} of the trust bundle: ${cause.message}`, { cause });
    }
    if (!anchor.basicConstraints?.ca) {
      throw fail(
        'invalid_input',
        `${position} of the trust bundle (${anchor.info.subject.text}) is not a CA certificate (basicConstraints cA is not set)`,
      );
    }
    return anchor;
  });
}

export interface VerifiedChain {
  leaf: CertificateInfo;
  /** The anchor the chain ends in. */
  anchor: CertificateInfo;
  /** Intermediates used, leaf side first. */
  intermediates: CertificateInfo[];
}

export interface ChainOptions {
  now: Date;
  /** Most certificates looked at in `chain`; longer chains are refused. */
  maxChainLength?: number;
}

/**
 * Validates a TLS client's chain (DER, leaf first, as `TransportContext` carries it) against
 * `anchors`. Every failure is reason `unauthenticated` with a message saying why; the chain's
 * own bytes never cause anything else.
 */
export function verifyClientChain(
  chain: readonly Uint8Array[],
  anchors: readonly TrustAnchor[],
  options: ChainOptions,
): VerifiedChain {
  const max = options.maxChainLength ?? MAX_CLIENT_CHAIN_LENGTH;
  if (chain.length === 0) throw refused('no client certificate was presented');
  if (chain.length > max)
    throw refused(`the client sent ${chain.length} certificates; at most ${max} are read`);
  if (anchors.length === 0) throw refused('no trust anchors are loaded');
  const certs = chain.map((der, i) => parseClientCertificate(der, i));
  const leaf = certs[0]!;
  const now = options.now;
  checkValidity(leaf, now, 'the client certificate');
  checkClientPurpose(leaf);

  const intermediates: CertificateInfo[] = [];
  let current = leaf;
  const used = new Set<number>([0]);
  for (let depth = 0; depth < max; depth++) {
    const anchor = anchors.find((a) => issues(a, current, now, intermediates.length));
    if (anchor) return { leaf: leaf.info, anchor: anchor.info, intermediates };
    const next = certs.findIndex((c, i) => !used.has(i) && issues(c, current, now, intermediates.length));
    if (next < 0) break;
    used.add(next);
    current = certs[next]!;
    intermediates.push(current.info);
  }
  throw refused(
    `the certificate ${leaf.info.subject.text} (issued by ${current.info.issuer.text}) does not chain to a trust anchor of this route`,
  );
}

interface ParsedCertificate {
  info: CertificateInfo;
  tbs: Uint8Array;
  signatureAlgorithm: string;
  signature: Uint8Array;
  basicConstraints?: BasicConstraints;
  keyUsage?: KeyUsage[];
  extendedKeyUsage?: string[];
}

/** Everything validation reads from a certificate, decoded once (so a bad extension fails here). */
function parseClientCertificate(der: Uint8Array, index: number): ParsedCertificate {
  try {
    const info = readCertificate(der);
    const [tbsNode, algNode, sigNode] = children(der, readRoot(der));
    const alg = children(der, expectTag(algNode, Tag.SEQUENCE, 'signatureAlgorithm'));
    const ekus = info.extensions.find((e) => e.oid === OID.extKeyUsage);
    return {
      ...constraintsOf(info),
      ...(ekus ? { extendedKeyUsage: decodeExtKeyUsage(ekus.value) } : {}),
      info,
      tbs: raw(der, tbsNode!),
      signatureAlgorithm: readOid(der, alg[0], 'signatureAlgorithm'),
      signature: readBitStringBytes(der, sigNode, 'signature'),
    };
  } catch (cause) {
    if (!isCertwrightError(cause)) throw cause;
    throw refused(`certificate ${index + 1} of the client chain is not usable: ${cause.message}`, cause);
  }
}

/**
 * Whether `issuer` issued `subject`: names match, the signature verifies, the issuer is a CA
 * allowed to sign certificates, valid now, and its path length allows `below` intermediates.
 */
function issues(issuer: Issuer, subject: ParsedCertificate, now: Date, below: number): boolean {
  const { info, basicConstraints: bc, keyUsage: ku } = issuer;
  if (!sameBytes(info.subject.der, subject.info.issuer.der)) return false;
  if (now < info.notBefore || now > info.notAfter) return false;
  if (!bc?.ca) return false;
  if (bc.pathLength !== undefined && below > bc.pathLength) return false;
  if (ku && !ku.includes('keyCertSign')) return false;
  try {
    return verifySignature(subject.signatureAlgorithm, info.spki, subject.tbs, subject.signature);
  } catch (error) {
    // An algorithm we do not accept, or a key that does not fit it: not this issuer.
    if (isCertwrightError(error)) return false;
    throw error;
  }
}

function checkValidity(cert: ParsedCertificate, now: Date, what: string): void {
  if (now < cert.info.notBefore) {
    throw refused(
      `${what} ${cert.info.subject.text} is not valid before ${cert.info.notBefore.toISOString()}`,
    );
  }
  if (now > cert.info.notAfter) {
    throw refused(`${what} ${cert.info.subject.text} expired on ${cert.info.notAfter.toISOString()}`);
  }
}

function checkClientPurpose(cert: ParsedCertificate): void {
  const ekus = cert.extendedKeyUsage;
  if (ekus && !ekus.includes('clientAuth') && !ekus.includes(OID.anyExtendedKeyUsage)) {
    throw refused(
      `the client certificate ${cert.info.subject.text} is not valid for client authentication (EKU)`,
    );
  }
  const ku = cert.keyUsage;
  if (ku && !ku.includes('digitalSignature')) {
    throw refused(
      `the client certificate ${cert.info.subject.text} does not allow digitalSignature (key usage)`,
    );
  }
}

/** A certificate that may issue others: an anchor or an intermediate, constraints decoded. */
interface Issuer {
  info: CertificateInfo;
  basicConstraints?: BasicConstraints;
  keyUsage?: KeyUsage[];
}

function constraintsOf(info: CertificateInfo): Omit<Issuer, 'info'> {
  const bc = info.extensions.find((e) => e.oid === OID.basicConstraints);
  const ku = info.extensions.find((e) => e.oid === OID.keyUsage);
  return {
    ...(bc ? { basicConstraints: decodeBasicConstraints(bc.value) } : {}),
    ...(ku ? { keyUsage: decodeKeyUsage(ku.value) } : {}),
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

const refused = (why: string, cause?: unknown): CertwrightError =>
  fail('unauthenticated', `client certificate refused: ${why}`, cause === undefined ? {} : { cause });

/**
 * A trust bundle read from a source (a file) that can be reloaded: a reload that fails leaves
 * the anchors loaded before in force. One instance per route and bundle; not tied to files so
 * it works for any source.
 */
export class TrustBundle {
  #anchors: readonly TrustAnchor[] = [];
  #loadedAt: Date | null = null;

  constructor(
    private readonly source: () => Promise<string>,
    private readonly limits: TrustBundleLimits = DEFAULT_TRUST_BUNDLE_LIMITS,
  ) {}

  /** The anchors in force (none until a load succeeded). */
  get anchors(): readonly TrustAnchor[] {
    return this.#anchors;
  }

  /** When the anchors in force were loaded; null before the first successful load. */
  get loadedAt(): Date | null {
    return this.#loadedAt;
  }

  /**
   * Reads and parses the source. On success the new anchors replace the old ones at once; on
   * failure nothing changes and the typed error says why (a source that cannot be read is
   * `unavailable`).
   */
  async reload(now: Date): Promise<readonly TrustAnchor[]> {
    let text: string;
    try {
      text = await this.source();
    } catch (cause) {
      if (isCertwrightError(cause)) throw cause;
      const code = (cause as { code?: unknown })?.code;
      throw fail(
        'unavailable',
        `the trust bundle cannot be read${typeof code === 'string' ? ` (${code})` : ''}`,
        { cause },
      );
    }
    const anchors = parseTrustBundle(text, this.limits);
    this.#anchors = Object.freeze(anchors);
    this.#loadedAt = now;
    return this.#anchors;
  }

  verify(chain: readonly Uint8Array[], options: ChainOptions): VerifiedChain {
    return verifyClientChain(chain, this.#anchors, options);
  }
}
