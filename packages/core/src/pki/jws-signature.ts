import { constants, type KeyObject, sign, verify } from 'node:crypto';
import type { PublicKeyDescription } from './key-check.js';

/**
 * JWS signatures (RFC 7518 §3.3–3.5, RFC 8037 §3.1) over node:crypto, shared by every JWS
 * certwright verifies or mints (ACME requests, device-management challenges): which key each
 * algorithm needs, signing and verifying. ECDSA signatures are the raw `r || s` of RFC 7518
 * §3.4, PS256 uses a salt as long as the hash.
 */

/** The asymmetric JWS algorithms certwright accepts; never `none`, never a MAC. */
export const JWS_SIGNATURE_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'] as const;
export type JwsSignatureAlgorithm = (typeof JWS_SIGNATURE_ALGORITHMS)[number];

/** Whether `alg` fits the key: RS256/PS256 need RSA ≥ 2048 bits, ES256 P-256, ES384 P-384, EdDSA Ed25519. */
export function jwsAlgorithmFitsKey(alg: JwsSignatureAlgorithm, key: PublicKeyDescription): boolean {
  switch (alg) {
    case 'RS256':
    case 'PS256':
      return key.type === 'RSA' && key.bits >= 2048;
    case 'ES256':
      return key.type === 'EC' && key.curve === 'P-256';
    case 'ES384':
      return key.type === 'EC' && key.curve === 'P-384';
    case 'EdDSA':
      return key.type === 'Ed25519';
  }
}

/** The algorithm a key signs with when the caller names none. */
export function defaultJwsAlgorithm(key: PublicKeyDescription): JwsSignatureAlgorithm | undefined {
  if (key.type === 'RSA') return 'RS256';
  if (key.type === 'Ed25519') return 'EdDSA';
  if (key.type === 'EC' && key.curve === 'P-256') return 'ES256';
  if (key.type === 'EC' && key.curve === 'P-384') return 'ES384';
  return undefined;
}

function parameters(alg: JwsSignatureAlgorithm, key: KeyObject) {
  switch (alg) {
    case 'ES256':
    case 'ES384':
      return {
        hash: alg === 'ES256' ? 'sha256' : 'sha384',
        key: { key, dsaEncoding: 'ieee-p1363' as const },
      };
    case 'PS256':
      return {
        hash: 'sha256',
        key: { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
      };
    case 'RS256':
      return { hash: 'sha256', key: { key, padding: constants.RSA_PKCS1_PADDING } };
    case 'EdDSA':
      return { hash: null, key: { key } };
  }
}

/**
 * The one length a signature by this key can have: RSA signatures are exactly as long as the
 * modulus (RFC 8017 §8.1.2 and §8.2.2, step 1), ECDSA `r || s` twice the curve's size (RFC 7518
 * §3.4), Ed25519 64 octets (RFC 8032 §5.1.7). OpenSSL's PSS verification reads a shorter
 * signature as the same number with its leading zero octets dropped, so without this check a
 * PS256 signature that starts with 0x00 would also verify with that octet removed.
 */
function signatureLength(alg: JwsSignatureAlgorithm, key: KeyObject): number | undefined {
  switch (alg) {
    case 'RS256':
    case 'PS256': {
      const bits = key.asymmetricKeyDetails?.modulusLength;
      return bits === undefined ? undefined : Math.ceil(bits / 8);
    }
    case 'ES256':
      return 64;
    case 'ES384':
      return 96;
    case 'EdDSA':
      return 64;
  }
}

export function signJws(alg: JwsSignatureAlgorithm, privateKey: KeyObject, input: Uint8Array): Buffer {
  const p = parameters(alg, privateKey);
  return sign(p.hash, input, p.key);
}

/**
 * False for a signature that does not verify, including one of the wrong length for the key.
 * The algorithm must already fit the key ({@link jwsAlgorithmFitsKey}).
 */
export function verifyJwsSignature(
  alg: JwsSignatureAlgorithm,
  publicKey: KeyObject,
  input: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (signature.length !== signatureLength(alg, publicKey)) return false;
  const p = parameters(alg, publicKey);
  try {
    return verify(p.hash, input, p.key, signature);
  } catch {
    // node:crypto throws for some malformed signatures instead of answering false.
    return false;
  }
}
