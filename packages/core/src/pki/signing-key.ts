import type { KeyObject } from 'node:crypto';
import { POST_QUANTUM_PARAMETER_SETS, type PostQuantumParameterSet } from './post-quantum.js';

/**
 * The signature mechanisms a CA key is asked for: ECDSA over P-256/P-384 with SHA-256/384
 * (RFC 5758 §3.2), RSA PKCS#1 v1.5 and RSASSA-PSS with SHA-256/384 (RFC 8017 §8), Ed25519
 * (RFC 8032), and pure ML-DSA / SLH-DSA with the empty context (RFC 9881, RFC 9909), named by
 * their parameter set. ECDSA signatures are DER Ecdsa-Sig-Value, as X.509, CRLs and OCSP carry them.
 */
export type SignMechanism =
  | 'ECDSA-SHA256'
  | 'ECDSA-SHA384'
  | 'RSA-PKCS1-SHA256'
  | 'RSA-PKCS1-SHA384'
  | 'RSA-PKCS1-SHA512'
  | 'RSA-PSS-SHA256'
  | 'RSA-PSS-SHA384'
  | 'Ed25519'
  | PostQuantumParameterSet;

export const SIGN_MECHANISMS: readonly SignMechanism[] = [
  'ECDSA-SHA256',
  'ECDSA-SHA384',
  'RSA-PKCS1-SHA256',
  'RSA-PKCS1-SHA384',
  'RSA-PKCS1-SHA512',
  'RSA-PSS-SHA256',
  'RSA-PSS-SHA384',
  'Ed25519',
  ...POST_QUANTUM_PARAMETER_SETS,
];

/**
 * A private key held elsewhere (a key custody: software, an HSM), seen only through its public
 * half and a sign operation. The PKI builders accept it wherever they accept a KeyObject, so a
 * CA's key bytes never need to be in this process.
 *
 * `sign` is synchronous: the builders sign inside synchronous encoders, and PKCS#11's C_Sign is
 * a blocking call in every binding either way.
 */
export interface SigningKey {
  /** SubjectPublicKeyInfo DER of the key's public half. */
  readonly spki: Buffer;
  sign(mechanism: SignMechanism, data: Uint8Array): Buffer;
}

export const isSigningKey = (key: KeyObject | SigningKey): key is SigningKey =>
  typeof (key as SigningKey).sign === 'function' && Buffer.isBuffer((key as SigningKey).spki);
