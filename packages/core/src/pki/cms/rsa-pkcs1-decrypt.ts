import {
  constants,
  createHash,
  createHmac,
  createPublicKey,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
} from 'node:crypto';
import { fail } from '../../errors.js';

/**
 * RSAES-PKCS1-v1_5 decryption (RFC 8017 §7.2.2) with implicit rejection, for CMS key transport.
 *
 * A decryptor that tells a bad padding apart from a good one — by an error, or by how long it
 * takes — is a Bleichenbacher oracle: enough queries recover any message encrypted to the key.
 * With implicit rejection (draft-irtf-cfrg-rsa-guidance, "implicit rejection"; OpenSSL ≥ 3.2)
 * a ciphertext with bad padding decrypts to a synthetic message derived from the ciphertext and
 * the private key: deterministic, indistinguishable from a real one, so a caller using it as a
 * content-encryption key fails later, at content decryption, exactly like a wrong key would.
 *
 * Node.js 20 refuses `RSA_PKCS1_PADDING` in `privateDecrypt` (CVE-2023-46809: its OpenSSL 3.0
 * has no implicit rejection); Node.js 22 and later allow it again because their OpenSSL does
 * it. So: feature-detect once per process whether the native path implicitly rejects (a
 * ciphertext with bad padding must decrypt without an error); if it does, use it; otherwise
 * decrypt with `RSA_NO_PADDING` and remove the padding here, with the same algorithm as OpenSSL,
 * so both paths return the same bytes for every ciphertext (a fleet on mixed Node.js versions
 * must not reveal which messages were synthetic by answering differently).
 *
 * The padding check below runs over every byte with no data-dependent branch or index. A
 * JavaScript JIT promises nothing about timing, so this is best effort; what the design
 * guarantees regardless is that no error and no different result ever depends on the padding.
 */

interface KeyMaterial {
  /** Modulus length in octets. */
  k: number;
  /** SHA-256 of the private exponent, big-endian, left-padded to k octets: the KDK's HMAC key. */
  dHash: Buffer;
}

const keyMaterial = new WeakMap<KeyObject, KeyMaterial>();

function materialOf(key: KeyObject): KeyMaterial {
  let m = keyMaterial.get(key);
  if (m) return m;
  if (key.type !== 'private' || key.asymmetricKeyType !== 'rsa') {
    throw fail('key_rejected', 'RSA PKCS#1 v1.5 decryption needs an RSA private key');
  }
  const jwk = key.export({ format: 'jwk' });
  const n = Buffer.from(jwk.n!, 'base64url');
  const k = n[0] === 0 ? n.length - 1 : n.length;
  const d = Buffer.from(jwk.d!, 'base64url');
  const padded = Buffer.alloc(k);
  d.copy(padded, k - d.length);
  m = { k, dHash: createHash('sha256').update(padded).digest() };
  padded.fill(0);
  d.fill(0);
  keyMaterial.set(key, m);
  return m;
}

// ---------------------------------------------------------------------------------------------
// Constant-time helpers on small non-negative integers (< 2^31). Masks are 0 or -1 (all ones).

/** -1 when a === b, else 0. */
const eqMask = (a: number, b: number): number => -(((a ^ b) - 1) >>> 31);
/** -1 when a < b, else 0. */
const ltMask = (a: number, b: number): number => -((a - b) >>> 31);
const select = (mask: number, a: number, b: number): number => (a & mask) | (b & ~mask);

// ---------------------------------------------------------------------------------------------
// Implicit rejection (the algorithm of OpenSSL's ossl_rsa_padding_check_PKCS1_type_2)

/** PRF(kdk, label, bits): HMAC-SHA256(kdk, I ‖ label ‖ bits) for I = 0, 1, … (16-bit big-endian). */
function prf(kdk: Buffer, label: string, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  const bits = Buffer.alloc(2);
  bits.writeUInt16BE((bytes * 8) & 0xffff);
  for (let i = 0, pos = 0; pos < bytes; i++, pos += 32) {
    const counter = Buffer.alloc(2);
    counter.writeUInt16BE(i);
    createHmac('sha256', kdk).update(counter).update(label).update(bits).digest().copy(out, pos);
  }
  return out;
}

/**
 * Removes PKCS#1 v1.5 type 2 padding from `em` (k octets) or, when it is not valid, returns the
 * synthetic message for `ciphertext`. Exported for tests; use {@link rsaPkcs1v15Decrypt}.
 */
export function unpadWithImplicitRejection(em: Uint8Array, ciphertext: Uint8Array, dHash: Buffer): Buffer {
  const k = em.length;
  const kdk = createHmac('sha256', dHash).update(ciphertext).digest();
  const synthetic = prf(kdk, 'message', k);
  const candidates = prf(kdk, 'length', 256);

  // The synthetic length: the last of 128 candidates below the largest possible message length.
  const maxSepOffset = k - 2 - 8;
  let lenMask = maxSepOffset;
  lenMask |= lenMask >>> 1;
  lenMask |= lenMask >>> 2;
  lenMask |= lenMask >>> 4;
  lenMask |= lenMask >>> 8;
  let syntheticLength = 0;
  for (let i = 0; i < 256; i += 2) {
    const candidate = ((candidates[i]! << 8) | candidates[i + 1]!) & lenMask;
    syntheticLength = select(ltMask(candidate, maxSepOffset), candidate, syntheticLength);
  }

  // EM = 0x00 ‖ 0x02 ‖ PS (≥ 8 non-zero octets) ‖ 0x00 ‖ M
  let good = eqMask(em[0]!, 0) & eqMask(em[1]!, 2);
  let found = 0;
  let zeroIndex = 0;
  for (let i = 2; i < k; i++) {
    const isZero = eqMask(em[i]!, 0);
    zeroIndex = select(~found & isZero, i, zeroIndex);
    found |= isZero;
  }
  good &= found;
  good &= ~ltMask(zeroIndex, 2 + 8);
  const length = select(good, k - (zeroIndex + 1), syntheticLength);

  // Both messages sit at the end of their k-octet buffers; copy the chosen tail, touching every octet.
  const out = Buffer.alloc(k);
  for (let i = 0; i < k; i++) out[i] = select(good, em[i]!, synthetic[i]!);
  return Buffer.from(out.subarray(k - length));
}

// ---------------------------------------------------------------------------------------------
// Feature detection

let nativeImplicitRejection: boolean | undefined;

/**
 * Whether this process's `privateDecrypt(RSA_PKCS1_PADDING)` implicitly rejects: a ciphertext
 * whose padding is wrong (block type 1) must decrypt without an error. Node.js 20 throws
 * (padding mode refused); an OpenSSL without implicit rejection would throw a padding error.
 */
function detectNative(key: KeyObject, k: number): boolean {
  if (nativeImplicitRejection !== undefined) return nativeImplicitRejection;
  const em = Buffer.alloc(k, 0x5a);
  em[0] = 0;
  em[1] = 1;
  try {
    const c = publicEncrypt({ key: createPublicKey(key), padding: constants.RSA_NO_PADDING }, em);
    privateDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, c);
    nativeImplicitRejection = true;
  } catch {
    nativeImplicitRejection = false;
  }
  return nativeImplicitRejection;
}

/** Which path this process uses (after the first decryption); for logs and tests. */
export const rsaPkcs1v15DecryptMode = (): 'native' | 'implicit-rejection-js' | 'undetected' =>
  nativeImplicitRejection === undefined
    ? 'undetected'
    : nativeImplicitRejection
      ? 'native'
      : 'implicit-rejection-js';

/** The ciphertext left-padded to k octets (as OpenSSL does), refused when longer. */
function fullLength(ciphertext: Uint8Array, k: number): Buffer {
  if (ciphertext.length > k) throw fail('malformed', 'RSA ciphertext is longer than the modulus');
  const c = Buffer.alloc(k);
  c.set(ciphertext, k - ciphertext.length);
  return c;
}

function decryptWith(privateKey: KeyObject, c: Buffer, padding: number): Buffer {
  try {
    return privateDecrypt({ key: privateKey, padding }, c);
  } catch (cause) {
    throw fail('malformed', 'RSA ciphertext is not below the modulus', { cause });
  }
}

function decryptJs(privateKey: KeyObject, c: Buffer, dHash: Buffer): Buffer {
  const em = decryptWith(privateKey, c, constants.RSA_NO_PADDING);
  try {
    return unpadWithImplicitRejection(em, c, dHash);
  } finally {
    em.fill(0);
  }
}

/**
 * Decrypts an RSAES-PKCS1-v1_5 ciphertext. Never fails because of the padding: a bad one yields
 * a synthetic message (see above). Fails only for what is public anyway: a key that is not an
 * RSA private key (`key_rejected`), a ciphertext longer than the modulus or not below it
 * (`malformed`).
 */
export function rsaPkcs1v15Decrypt(privateKey: KeyObject, ciphertext: Uint8Array): Buffer {
  const { k, dHash } = materialOf(privateKey);
  const c = fullLength(ciphertext, k);
  if (detectNative(privateKey, k)) return decryptWith(privateKey, c, constants.RSA_PKCS1_PADDING);
  return decryptJs(privateKey, c, dHash);
}

/** The JavaScript path whatever the runtime supports; for tests that compare both paths. */
export function rsaPkcs1v15DecryptJs(privateKey: KeyObject, ciphertext: Uint8Array): Buffer {
  const { k, dHash } = materialOf(privateKey);
  return decryptJs(privateKey, fullLength(ciphertext, k), dHash);
}
