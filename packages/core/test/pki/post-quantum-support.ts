/**
 * Test support for post-quantum signatures: whether this runtime has them (the tests skip with
 * a printed reason where it does not), and verification with @noble/post-quantum, an
 * implementation of FIPS 204/205 independent of the OpenSSL that signed, over the exact TBS
 * bytes our own DER reader finds in a certificate, CRL or OCSP response.
 */
import { execFileSync } from 'node:child_process';
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import {
  slh_dsa_sha2_128f,
  slh_dsa_sha2_128s,
  slh_dsa_sha2_192f,
  slh_dsa_sha2_192s,
  slh_dsa_sha2_256f,
  slh_dsa_sha2_256s,
  slh_dsa_shake_128f,
  slh_dsa_shake_128s,
  slh_dsa_shake_192f,
  slh_dsa_shake_192s,
  slh_dsa_shake_256f,
  slh_dsa_shake_256s,
} from '@noble/post-quantum/slh-dsa.js';
import { Tag } from '../../src/pki/der.js';
import { children, expectTag, raw, readBitStringBytes, readOid, readRoot } from '../../src/pki/der-reader.js';
import { type PostQuantumParameterSet, postQuantumByOid } from '../../src/pki/post-quantum.js';
import { postQuantumRuntime } from '../../src/pki/post-quantum-runtime.js';

const runtime = postQuantumRuntime();

/** Why post-quantum tests skip here, or undefined when they run; printed once per file. */
export const postQuantumSkip: string | undefined = runtime.supported
  ? undefined
  : `post-quantum tests skipped: Node.js ${runtime.node} with OpenSSL ${runtime.openssl} has no ML-DSA/SLH-DSA (needs Node.js 24 with OpenSSL 3.5)`;

export function printPostQuantumSkip(file: string): void {
  if (postQuantumSkip) console.warn(`${file}: ${postQuantumSkip}`);
}

interface Verifier {
  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

const NOBLE: Record<PostQuantumParameterSet, Verifier> = {
  'ML-DSA-44': ml_dsa44,
  'ML-DSA-65': ml_dsa65,
  'ML-DSA-87': ml_dsa87,
  'SLH-DSA-SHA2-128S': slh_dsa_sha2_128s,
  'SLH-DSA-SHA2-128F': slh_dsa_sha2_128f,
  'SLH-DSA-SHA2-192S': slh_dsa_sha2_192s,
  'SLH-DSA-SHA2-192F': slh_dsa_sha2_192f,
  'SLH-DSA-SHA2-256S': slh_dsa_sha2_256s,
  'SLH-DSA-SHA2-256F': slh_dsa_sha2_256f,
  'SLH-DSA-SHAKE-128S': slh_dsa_shake_128s,
  'SLH-DSA-SHAKE-128F': slh_dsa_shake_128f,
  'SLH-DSA-SHAKE-192S': slh_dsa_shake_192s,
  'SLH-DSA-SHAKE-192F': slh_dsa_shake_192f,
  'SLH-DSA-SHAKE-256S': slh_dsa_shake_256s,
  'SLH-DSA-SHAKE-256F': slh_dsa_shake_256f,
};

/** The raw public key of an SPKI (RFC 9881 §4: the BIT STRING holds the encoded key itself). */
export function rawPublicKey(spki: Uint8Array): { set: PostQuantumParameterSet; key: Uint8Array } {
  const [alg, bits] = children(spki, readRoot(spki));
  const algParts = children(spki, expectTag(alg, Tag.SEQUENCE, 'algorithm'));
  const params = postQuantumByOid(readOid(spki, algParts[0]));
  if (!params) throw new Error('not a post-quantum SubjectPublicKeyInfo');
  if (algParts.length !== 1) throw new Error(`${params.name} SPKI carries algorithm parameters`);
  return { set: params.name, key: readBitStringBytes(spki, bits, 'subjectPublicKey') };
}

export interface SignedParts {
  tbs: Uint8Array;
  set: PostQuantumParameterSet;
  /** Whether the AlgorithmIdentifier has no parameters, as RFC 9881 §3 / RFC 9909 §3 require. */
  parametersAbsent: boolean;
  signature: Uint8Array;
}

/** TBS, algorithm and signature of a certificate or CRL: SEQUENCE { tbs, alg, BIT STRING }. */
export function signedParts(der: Uint8Array): SignedParts {
  const [tbs, alg, sig] = children(der, readRoot(der));
  return partsOf(der, tbs!, alg!, sig!);
}

function partsOf(
  der: Uint8Array,
  tbs: ReturnType<typeof readRoot>,
  alg: ReturnType<typeof readRoot>,
  sig: ReturnType<typeof readRoot>,
): SignedParts {
  const algParts = children(der, expectTag(alg, Tag.SEQUENCE, 'signatureAlgorithm'));
  const params = postQuantumByOid(readOid(der, algParts[0]));
  if (!params) throw new Error(`not a post-quantum signature: ${readOid(der, algParts[0])}`);
  return {
    tbs: raw(der, tbs),
    set: params.name,
    parametersAbsent: algParts.length === 1,
    signature: readBitStringBytes(der, sig, 'signature'),
  };
}

/**
 * The BasicOCSPResponse inside an OCSPResponse (RFC 6960 §4.2.1): tbsResponseData, its
 * algorithm and signature (the certs that may follow are not signed parts).
 */
export function ocspSignedParts(der: Uint8Array): SignedParts {
  const [, bytesNode] = children(der, readRoot(der));
  const responseBytes = children(der, children(der, bytesNode!)[0]!);
  const octets = responseBytes[1]!;
  const basic = der.subarray(octets.contentStart, octets.end);
  const [tbs, alg, sig] = children(basic, readRoot(basic));
  return partsOf(basic, tbs!, alg!, sig!);
}

/** The first certificate of a BasicOCSPResponse's `certs` (the delegated responder's), DER. */
export function ocspResponderCertificate(der: Uint8Array): Uint8Array {
  const [, bytesNode] = children(der, readRoot(der));
  const octets = children(der, children(der, bytesNode!)[0]!)[1]!;
  const basic = der.subarray(octets.contentStart, octets.end);
  const certs = children(basic, readRoot(basic))[3];
  if (certs?.tag !== 0xa0) throw new Error('the OCSP response carries no certificates');
  const first = children(basic, children(basic, certs)[0]!)[0]!;
  return raw(basic, first);
}

/** Verifies a post-quantum signature with @noble/post-quantum; the key's set must match. */
export function nobleVerifies(parts: SignedParts, issuerSpki: Uint8Array): boolean {
  const { set, key } = rawPublicKey(issuerSpki);
  if (set !== parts.set) throw new Error(`signed with ${parts.set}, but the issuer key is ${set}`);
  return NOBLE[set].verify(parts.signature, parts.tbs, key);
}

/** `openssl asn1parse` (the system's 3.0 reads the structure, not the algorithms) succeeds. */
export function asn1parses(der: Uint8Array): string {
  return execFileSync('openssl', ['asn1parse', '-inform', 'DER'], { input: der, encoding: 'utf8' });
}
