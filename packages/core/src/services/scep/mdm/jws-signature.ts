import { constants, type KeyObject, sign, verify } from 'node:crypto';
import type { PublicKeyDescription } from '../../../pki/key-check.js';
import type { MdmChallengeAlgorithm } from './token.js';

/**
 * JWS signatures (RFC 7518 §3.3–3.5, RFC 8037 §3.1) over node:crypto, for challenges: which
 * key each algorithm needs, signing (minting) and verifying. ECDSA signatures are the raw
 * `r || s` of RFC 7518 §3.4, PS256 uses a salt as long as the hash.
 */

/** Whether `alg` fits the key: RS256/PS256 need RSA ≥ 2048 bits, ES256 P-256, ES384 P-384, EdDSA Ed25519. */
export function algorithmFitsKey(alg: MdmChallengeAlgorithm, key: PublicKeyDescription): boolean {
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
export function defaultAlgorithmFor(key: PublicKeyDescription): MdmChallengeAlgorithm | undefined {
  if (key.type === 'RSA') return 'RS256';
  if (key.type === 'Ed25519') return 'EdDSA';
  if (key.type === 'EC' && key.curve === 'P-256') return 'ES256';
  if (key.type === 'EC' && key.curve === 'P-384') return 'ES384';
  return undefined;
}

function parameters(alg: MdmChallengeAlgorithm, key: KeyObject) {
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

export function signJws(alg: MdmChallengeAlgorithm, privateKey: KeyObject, input: Uint8Array): Buffer {
  const p = parameters(alg, privateKey);
  return sign(p.hash, input, p.key);
}

/** False for a signature that does not verify, including one of the wrong length for the key. */
export function verifyJwsSignature(
  alg: MdmChallengeAlgorithm,
  publicKey: KeyObject,
  input: Uint8Array,
  signature: Uint8Array,
): boolean {
  const p = parameters(alg, publicKey);
  try {
    return verify(p.hash, input, p.key, signature);
  } catch {
    // node:crypto throws for some malformed signatures (wrong length) instead of answering false.
    return false;
  }
}
