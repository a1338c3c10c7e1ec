import {
  createPrivateKey,
  createPublicKey,
  generateKeyPair as generateKeyPairCb,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { CertwrightError, fail, isCertwrightError } from '../errors.js';
import { children, readBitStringBytes, readPositiveInteger, readRoot } from './der-reader.js';
import { checkPrivateKeyInfo, checkSubjectPublicKeyInfo, type PublicKeyDescription } from './key-check.js';
import { pemDecode, pemEncode } from './pem.js';
import {
  POST_QUANTUM_PARAMETER_SETS,
  type PostQuantumParameterSet,
  postQuantumByName,
} from './post-quantum.js';
import { assertPostQuantumRuntime } from './post-quantum-runtime.js';

const generate = promisify(generateKeyPairCb);

/**
 * Key algorithms certwright generates: RSA 2048/3072/4096, ECDSA P-256/P-384, Ed25519, and the
 * post-quantum ML-DSA and SLH-DSA parameter sets (Node.js 24 and later, post-quantum.ts).
 */
export type KeyAlgorithm =
  | 'RSA-2048'
  | 'RSA-3072'
  | 'RSA-4096'
  | 'ECDSA-P256'
  | 'ECDSA-P384'
  | 'Ed25519'
  | PostQuantumParameterSet;

export const KEY_ALGORITHMS: readonly KeyAlgorithm[] = [
  'RSA-2048',
  'RSA-3072',
  'RSA-4096',
  'ECDSA-P256',
  'ECDSA-P384',
  'Ed25519',
  ...POST_QUANTUM_PARAMETER_SETS,
];

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export type { PublicKeyDescription } from './key-check.js';

/** Generates a key pair off the main thread (node runs key generation in its thread pool). */
export async function generateKeyPair(algorithm: KeyAlgorithm): Promise<KeyPair> {
  switch (algorithm) {
    case 'RSA-2048':
    case 'RSA-3072':
    case 'RSA-4096':
      return generate('rsa', { modulusLength: Number(algorithm.slice(4)), publicExponent: 0x10001 });
    case 'ECDSA-P256':
      return generate('ec', { namedCurve: 'P-256' });
    case 'ECDSA-P384':
      return generate('ec', { namedCurve: 'P-384' });
    case 'Ed25519':
      return generate('ed25519');
    default: {
      const pq = postQuantumByName(algorithm);
      if (pq) {
        assertPostQuantumRuntime(`a ${pq.name} key`);
        // node:crypto's typings predate these key types.
        return generate(pq.nodeType as 'ed25519');
      }
      throw new CertwrightError('validation_failed', `unsupported key algorithm '${String(algorithm)}'`, {
        fields: [{ field: 'key_algorithm', message: `must be one of ${KEY_ALGORITHMS.join(', ')}` }],
      });
    }
  }
}

/**
 * Describes a public (or private) key: algorithm and size or curve. Read from the key's SPKI
 * bytes through `checkSubjectPublicKeyInfo`, never from `asymmetricKeyDetails`, which
 * aborts the process for some keys OpenSSL accepts.
 */
export function describePublicKey(key: KeyObject | Uint8Array): PublicKeyDescription {
  if (key instanceof Uint8Array) return checkSubjectPublicKeyInfo(key);
  let description = descriptions.get(key);
  if (!description) {
    description = Object.freeze(checkSubjectPublicKeyInfo(exportSpkiDer(key)));
    descriptions.set(key, description);
  }
  return description;
}

/**
 * Descriptions of KeyObjects, which are immutable: a long-lived key (an RA's, a CA's) is
 * described on every CMS reply or certificate it signs, and reading an RSA SPKI through the
 * key check costs about 0.1 ms each time.
 */
const descriptions = new WeakMap<KeyObject, Readonly<PublicKeyDescription>>();

/** Short text form of a description, e.g. `RSA-2048`, `ECDSA-P256`, `Ed25519`, `ML-DSA-65`. */
export function keyAlgorithmName(d: PublicKeyDescription): string {
  if (d.type === 'RSA') return `RSA-${d.bits}`;
  if (d.type === 'EC') return `ECDSA-${d.curve.replace('-', '')}`;
  if (d.type === 'ML-DSA' || d.type === 'SLH-DSA') return d.parameterSet;
  return d.type;
}

const asPublic = (key: KeyObject): KeyObject => (key.type === 'private' ? createPublicKey(key) : key);

// KeyObjects are immutable, and OpenSSL 3's encoder makes an SPKI export cost about ten
// ECDSA signatures, so each key's SPKI is encoded once.
const spkiCache = new WeakMap<KeyObject, Buffer>();

/** SubjectPublicKeyInfo DER of a public key, or of a private key's public half. */
export function exportSpkiDer(key: KeyObject): Buffer {
  let spki = spkiCache.get(key);
  if (!spki) {
    try {
      spki = asPublic(key).export({ type: 'spki', format: 'der' });
    } catch (cause) {
      throw fail('key_rejected', 'the key has no exportable public key', { cause });
    }
    spkiCache.set(key, spki);
  }
  // A copy, so that no caller can alter the cached bytes.
  return Buffer.from(spki);
}
export const exportSpkiPem = (key: KeyObject): string => pemEncode('PUBLIC KEY', exportSpkiDer(key));

/** Unencrypted PKCS#8 DER, for the SecretBox that wraps CA keys at rest. Never log it. */
export function exportPkcs8Der(key: KeyObject): Buffer {
  if (key.type !== 'private') throw new CertwrightError('internal', 'exportPkcs8Der needs a private key');
  return key.export({ type: 'pkcs8', format: 'der' });
}

export const exportPkcs8Pem = (key: KeyObject): string => pemEncode('PRIVATE KEY', exportPkcs8Der(key));

/**
 * Imports an unencrypted PKCS#8 key after `checkPrivateKeyInfo` accepted its bytes, and
 * checks the public half node:crypto derives from it as well.
 */
export function importPkcs8Der(der: Uint8Array): KeyObject {
  let description: PublicKeyDescription;
  try {
    description = checkPrivateKeyInfo(der);
  } catch (cause) {
    if (isCertwrightError(cause) && cause.reason === 'malformed')
      throw fail('malformed', `not a valid PKCS#8 private key: ${cause.message}`, { cause });
    throw cause;
  }
  if (description.type === 'ML-DSA' || description.type === 'SLH-DSA')
    assertPostQuantumRuntime(`an ${description.parameterSet} key`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
  } catch (cause) {
    throw fail('malformed', 'not a valid PKCS#8 private key', { cause });
  }
  checkSubjectPublicKeyInfo(exportSpkiDer(key));
  return key;
}

/** Imports `PRIVATE KEY` PEM only; legacy `RSA/EC PRIVATE KEY` forms are refused by label. */
export const importPkcs8Pem = (pem: string): KeyObject => importPkcs8Der(pemDecode(pem, 'PRIVATE KEY'));

const EC_COORDINATE_BYTES = { 'P-256': 32, 'P-384': 48, 'P-521': 66 } as const;

/**
 * Public keys imported lately, by their SPKI bytes. One request often names one key twice — a
 * SCEP PKCSReq is signed by a self-signed certificate over the key of the CSR it carries — and
 * OpenSSL's decoder takes about as long for an RSA key as an RSA signature check. A KeyObject
 * is immutable, so the same bytes may share one; only keys that passed the checks are kept.
 */
const recentSpki = new Map<string, KeyObject>();
const RECENT_SPKI_MAX = 64;

/** Imports a SubjectPublicKeyInfo after `checkSubjectPublicKeyInfo` accepted it. */
export function importSpkiDer(der: Uint8Array): KeyObject {
  const id = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('latin1');
  const known = recentSpki.get(id);
  if (known) return known;
  const key = importCheckedSpki(der);
  if (recentSpki.size >= RECENT_SPKI_MAX) recentSpki.delete(recentSpki.keys().next().value!);
  recentSpki.set(id, key);
  return key;
}

function importCheckedSpki(der: Uint8Array): KeyObject {
  const description = checkSubjectPublicKeyInfo(der);
  if (description.type === 'ML-DSA' || description.type === 'SLH-DSA')
    assertPostQuantumRuntime(`an ${description.parameterSet} key`);
  try {
    // An uncompressed EC key goes in as its point (RFC 7518 §6.2.1): the same key, and about
    // half the import cost of node:crypto's DER decoder, which every CSR and enrollment pays.
    // The point is read from the BIT STRING the check above accepted; a compressed point (SEC 1
    // §2.3.3, shorter) goes to the DER decoder, which expands it.
    if (description.type === 'EC') {
      const size = EC_COORDINATE_BYTES[description.curve];
      const point = readBitStringBytes(der, children(der, readRoot(der))[1]!, 'subjectPublicKey');
      if (point.length === 1 + 2 * size && point[0] === 0x04) {
        const coordinates = Buffer.from(point.buffer, point.byteOffset + 1, 2 * size);
        return createPublicKey({
          key: {
            kty: 'EC',
            crv: description.curve,
            x: coordinates.subarray(0, size).toString('base64url'),
            y: coordinates.subarray(size).toString('base64url'),
          },
          format: 'jwk',
        });
      }
    }
    // An rsaEncryption key goes in as its modulus and exponent (RFC 7518 §6.3.1), read from
    // the RSAPublicKey the check above accepted: the same key, for about a tenth of what
    // node:crypto's DER decoder costs (OpenSSL 3's decoder framework, ~0.2 ms per RSA key).
    if (description.type === 'RSA') {
      const rsaKey = readBitStringBytes(der, children(der, readRoot(der))[1]!, 'subjectPublicKey');
      const [n, e] = children(rsaKey, readRoot(rsaKey));
      return createPublicKey({
        key: {
          kty: 'RSA',
          n: Buffer.from(readPositiveInteger(rsaKey, n, 'RSAPublicKey.modulus')).toString('base64url'),
          e: Buffer.from(readPositiveInteger(rsaKey, e, 'RSAPublicKey.publicExponent')).toString('base64url'),
        },
        format: 'jwk',
      });
    }
    return createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
  } catch (cause) {
    throw fail('key_rejected', 'the public key is not usable', { cause });
  }
}

export const importSpkiPem = (pem: string): KeyObject => importSpkiDer(pemDecode(pem, 'PUBLIC KEY'));
