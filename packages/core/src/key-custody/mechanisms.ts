import { constants, type KeyObject, sign } from 'node:crypto';
import { fail } from '../errors.js';
import { describePublicKey, KEY_ALGORITHMS, type KeyAlgorithm, keyAlgorithmName } from '../pki/keys.js';
import { isPostQuantumParameterSet, type PostQuantumParameterSet } from '../pki/post-quantum.js';
import type { SignMechanism } from '../pki/signing-key.js';

/**
 * The digest of a mechanism (node:crypto name), null for Ed25519, ML-DSA and SLH-DSA, which
 * take the message itself.
 */
export function mechanismHash(mechanism: SignMechanism): 'sha256' | 'sha384' | 'sha512' | null {
  if (mechanism === 'Ed25519' || isPostQuantumParameterSet(mechanism)) return null;
  return mechanism.slice(mechanism.lastIndexOf('-') + 1).toLowerCase() as 'sha256' | 'sha384' | 'sha512';
}

/** The key family a mechanism needs; a post-quantum mechanism needs a key of its own parameter set. */
export function mechanismKeyType(
  mechanism: SignMechanism,
): 'RSA' | 'EC' | 'Ed25519' | PostQuantumParameterSet {
  if (mechanism.startsWith('RSA-')) return 'RSA';
  if (mechanism.startsWith('ECDSA-')) return 'EC';
  return mechanism === 'Ed25519' ? 'Ed25519' : (mechanism as PostQuantumParameterSet);
}

/** The KeyAlgorithm of a public key, or `key_not_allowed` for one a CA key cannot be. */
export function keyAlgorithmOfSpki(spki: Uint8Array): KeyAlgorithm {
  const name = keyAlgorithmName(describePublicKey(spki));
  if (!(KEY_ALGORITHMS as readonly string[]).includes(name))
    throw fail('key_not_allowed', `a ${name} key cannot be held as a CA key`);
  return name as KeyAlgorithm;
}

/** Refuses a mechanism that does not fit the key (an RSA mechanism on an EC key …). */
export function assertMechanismFits(label: string, algorithm: KeyAlgorithm, mechanism: SignMechanism): void {
  const family = algorithm.startsWith('RSA')
    ? 'RSA'
    : algorithm.startsWith('ECDSA')
      ? 'EC'
      : algorithm === 'Ed25519'
        ? 'Ed25519'
        : algorithm;
  if (mechanismKeyType(mechanism) !== family) {
    throw fail('key_not_allowed', `key '${label}' is ${algorithm}: it cannot sign with ${mechanism}`);
  }
}

/** Signs with a key in this process; PSS uses a salt as long as the digest (RFC 8017 §9.1). */
export function signWithKeyObject(key: KeyObject, mechanism: SignMechanism, data: Uint8Array): Buffer {
  const hash = mechanismHash(mechanism);
  if (mechanism.startsWith('RSA-PSS-')) {
    return sign(hash, data, {
      key,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
    });
  }
  return sign(hash, data, key);
}
