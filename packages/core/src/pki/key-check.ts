import { fail } from '../errors.js';
import { Tag } from './der.js';
import {
  children,
  content,
  type DerNode,
  expectTag,
  malformed,
  readBitStringBytes,
  readOid,
  readPositiveInteger,
  readRoot,
  readSmallInteger,
} from './der-reader.js';
import { OID } from './oids.js';
import {
  ML_DSA_SEED_BYTES,
  type MlDsaParameterSet,
  type PostQuantumParameters,
  postQuantumByOid,
  type SlhDsaParameterSet,
} from './post-quantum.js';

/**
 * Checks a key from its bytes, with our own DER reader, before node:crypto sees it.
 *
 * Node aborts the whole process (a native assertion, not an exception) when it is asked for the
 * details of some keys OpenSSL imports without complaint: an EC point at infinity, a DSA key
 * with y = −1. So no key from outside reaches `createPublicKey`/`createPrivateKey` until it
 * passed these checks: an algorithm certwright supports, named curves only, a point that lies
 * on its curve, an RSA modulus and exponent of sane size and shape. Everything else is refused
 * with `key_rejected` (structural DER problems with `malformed`). See docs/pki.md.
 */

/** What a public key is, in the terms profiles use to allow or refuse it. */
export type PublicKeyDescription =
  | { type: 'RSA'; bits: number }
  | { type: 'EC'; curve: 'P-256' | 'P-384' | 'P-521' }
  | { type: 'Ed25519' }
  | { type: 'Ed448' }
  | { type: 'ML-DSA'; parameterSet: MlDsaParameterSet }
  | { type: 'SLH-DSA'; parameterSet: SlhDsaParameterSet };

/** Bounds every key check applies; policy sizes (RSA ≥ 2048 …) are enforced by profiles. */
export const KEY_CHECK_LIMITS = Object.freeze({
  /** An RSA-16384 SubjectPublicKeyInfo is about 2.1 KiB, an ML-DSA-87 one 2,614 bytes. */
  maxSpkiBytes: 4096,
  /** An RSA-16384 PKCS#8 key is about 9.5 KiB. */
  maxPrivateKeyBytes: 16 * 1024,
  rsaMinBits: 1024,
  rsaMaxBits: 16_384,
  /** FIPS 186-5 §A.1.1 bounds e below 2^256; a larger one only makes verification slow. */
  rsaMaxExponentBits: 256,
});

const reject = (message: string): never => {
  throw fail('key_rejected', `public key refused: ${message}`);
};

// ---------------------------------------------------------------------------------------------
// Arithmetic

const toBigInt = (bytes: Uint8Array): bigint =>
  bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);

/** Bit length of an unsigned big-endian magnitude. */
function bitLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i]!));
}

const mod = (a: bigint, m: bigint): bigint => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

/**
 * Whether `a` is a square modulo the odd prime `p` (0 counts as one): the Jacobi symbol, which
 * equals the Legendre symbol for a prime and costs a few dozen BigInt divisions instead of
 * the ~p-bit-length multiplications of Euler's criterion.
 */
function isSquare(a: bigint, p: bigint): boolean {
  let x = mod(a, p);
  let n = p;
  let sign = 1;
  while (x !== 0n) {
    // Strip the factors of two at once; each one flips the sign when n ≡ 3, 5 (mod 8).
    let low = Number(x & 0xffffffffn);
    while (low === 0) {
      x >>= 32n; // an even number of twos: no sign change
      low = Number(x & 0xffffffffn);
    }
    const twos = 31 - Math.clz32(low & -low);
    x >>= BigInt(twos);
    const r = n & 7n;
    if (twos & 1 && (r === 3n || r === 5n)) sign = -sign;
    [x, n] = [n, x];
    if ((x & 3n) === 3n && (n & 3n) === 3n) sign = -sign;
    x %= n;
  }
  return n !== 1n || sign === 1;
}

// ---------------------------------------------------------------------------------------------
// Curves (SEC 2 / FIPS 186-5 parameters, a = p − 3; all three have cofactor 1, so every point
// on the curve except infinity generates the full group)

interface Curve {
  name: 'P-256' | 'P-384' | 'P-521';
  p: bigint;
  b: bigint;
  /** Group order. */
  n: bigint;
  /** Field element size in octets. */
  size: number;
}

const CURVES: Record<string, Curve> = {
  '1.2.840.10045.3.1.7': {
    name: 'P-256',
    p: 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn,
    b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
    n: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
    size: 32,
  },
  '1.3.132.0.34': {
    name: 'P-384',
    p: 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffffn,
    b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
    n: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
    size: 48,
  },
  '1.3.132.0.35': {
    name: 'P-521',
    p: (1n << 521n) - 1n,
    b: 0x51953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
    n: 0x1fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
    size: 66,
  },
};

/** y² = x³ − 3x + b, the right-hand side for `x`. */
const curveRhs = (c: Curve, x: bigint): bigint => mod(x * x * x - 3n * x + c.b, c.p);

/** Checks an ECPoint (SEC 1 §2.3.4): uncompressed or compressed, coordinates in range, on the curve. */
function checkEcPoint(c: Curve, point: Uint8Array): void {
  const form = point[0];
  if (point.length === 0 || form === 0x00) reject(`the ${c.name} point is the point at infinity`);
  if (form === 0x04) {
    if (point.length !== 1 + 2 * c.size)
      reject(`an uncompressed ${c.name} point must be ${1 + 2 * c.size} octets`);
    const x = toBigInt(point.subarray(1, 1 + c.size));
    const y = toBigInt(point.subarray(1 + c.size));
    if (x >= c.p || y >= c.p) reject(`a ${c.name} point coordinate is not below the field prime`);
    if (mod(y * y, c.p) !== curveRhs(c, x)) reject(`the point is not on ${c.name}`);
    return;
  }
  if (form === 0x02 || form === 0x03) {
    if (point.length !== 1 + c.size) reject(`a compressed ${c.name} point must be ${1 + c.size} octets`);
    const x = toBigInt(point.subarray(1));
    if (x >= c.p) reject(`the ${c.name} point's x coordinate is not below the field prime`);
    const rhs = curveRhs(c, x);
    // No point of these prime-order curves has y = 0; any other square gives a point.
    if (rhs === 0n || !isSquare(rhs, c.p)) reject(`no point of ${c.name} has this x coordinate`);
    return;
  }
  reject(`unsupported EC point form 0x${(form ?? 0).toString(16)} (hybrid forms are not used)`);
}

// ---------------------------------------------------------------------------------------------
// Edwards curves (RFC 8032 §5.1.3 and §5.2.3 point decoding, without recovering x)

interface Edwards {
  name: 'Ed25519' | 'Ed448';
  p: bigint;
  /** x² = (y² − 1) / (d·y² − a) with a = −1 (Ed25519) or 1 (Ed448). */
  d: bigint;
  a: bigint;
  size: number;
}

// d = −121665/121666 mod p (RFC 8032 §5.1).
const ED25519: Edwards = {
  name: 'Ed25519',
  p: (1n << 255n) - 19n,
  d: 0x52036cee2b6ffe738cc740797779e89800700a4d4141d8ab75eb4dca135978a3n,
  a: -1n,
  size: 32,
};
const ED448: Edwards = { name: 'Ed448', p: (1n << 448n) - (1n << 224n) - 1n, d: -39081n, a: 1n, size: 57 };

function checkEdwardsPoint(e: Edwards, key: Uint8Array): void {
  if (key.length !== e.size) reject(`an ${e.name} public key must be ${e.size} octets`);
  const le = Buffer.from(key).reverse();
  const sign = (le[0]! & 0x80) !== 0;
  le[0]! &= 0x7f;
  const y = toBigInt(le);
  if (y >= e.p) reject(`the ${e.name} point's y coordinate is not below the field prime`);
  const y2 = mod(y * y, e.p);
  const u = mod(y2 - 1n, e.p);
  const v = mod(e.d * y2 - e.a, e.p);
  if (v === 0n) reject(`the ${e.name} point cannot be decoded`);
  // x² = u/v has a root exactly when u·v does (v² is a square), so no inversion is needed.
  if (!isSquare(u * v, e.p)) reject(`the ${e.name} point is not on the curve`);
  if (u === 0n && sign) reject(`the ${e.name} point has a non-canonical encoding`);
}

// ---------------------------------------------------------------------------------------------
// RSA

function checkRsaNumbers(n: Uint8Array, e: Uint8Array): number {
  const bits = bitLength(n);
  const { rsaMinBits, rsaMaxBits, rsaMaxExponentBits } = KEY_CHECK_LIMITS;
  if (bits < rsaMinBits || bits > rsaMaxBits)
    reject(`an RSA modulus of ${bits} bits is outside ${rsaMinBits}–${rsaMaxBits} bits`);
  if ((n[n.length - 1]! & 1) === 0) reject('the RSA modulus is even');
  const eBits = bitLength(e);
  if (eBits > rsaMaxExponentBits) reject(`the RSA public exponent is longer than ${rsaMaxExponentBits} bits`);
  if ((e[e.length - 1]! & 1) === 0 || toBigInt(e) < 3n)
    reject('the RSA public exponent must be odd and at least 3');
  return bits;
}

/** RSAPublicKey (RFC 8017 §A.1.1): modulus and exponent, nothing else. */
function checkRsaPublicKey(der: Uint8Array): number {
  const parts = children(der, expectTag(readRoot(der), Tag.SEQUENCE, 'RSAPublicKey'));
  if (parts.length !== 2) throw malformed('RSAPublicKey', 'must hold exactly a modulus and an exponent');
  return checkRsaNumbers(
    readPositiveInteger(der, parts[0], 'RSAPublicKey.modulus'),
    readPositiveInteger(der, parts[1], 'RSAPublicKey.publicExponent'),
  );
}

// ---------------------------------------------------------------------------------------------
// Algorithm identifiers

type KeyAlgorithm =
  | { kind: 'RSA' }
  | { kind: 'EC'; curve: Curve }
  | { kind: 'Edwards'; curve: Edwards }
  | { kind: 'PQ'; params: PostQuantumParameters };

const REFUSED_ALGORITHMS: Record<string, string> = {
  '1.2.840.10040.4.1': 'DSA keys are not supported',
  '1.2.840.10046.2.1': 'Diffie-Hellman keys cannot sign',
  '1.2.840.113549.1.3.1': 'Diffie-Hellman keys cannot sign',
  [OID.rsassaPss]: 'RSASSA-PSS keys are not supported (use an rsaEncryption key)',
  '1.3.101.110': 'X25519 keys cannot sign',
  '1.3.101.111': 'X448 keys cannot sign',
  '1.3.132.1.12': 'ECDH-only keys are not supported',
  '1.3.132.1.13': 'ECMQV keys are not supported',
};

/** Reads an AlgorithmIdentifier of a key and refuses anything certwright does not support. */
function readKeyAlgorithm(buf: Uint8Array, node: DerNode | undefined, field: string): KeyAlgorithm {
  const parts = children(buf, expectTag(node, Tag.SEQUENCE, field));
  if (parts.length > 2) throw malformed(field, 'unexpected fields in the AlgorithmIdentifier');
  const algorithm = readOid(buf, parts[0], field);
  const params = parts[1];
  switch (algorithm) {
    case OID.rsaEncryption:
      // RFC 3279 §2.3.1: the parameters are NULL (a few encoders omit them).
      if (params && (params.tag !== Tag.NULL || params.end !== params.contentStart))
        reject('rsaEncryption parameters must be NULL');
      return { kind: 'RSA' };
    case OID.idEcPublicKey: {
      // RFC 5480 §2.1.1: only namedCurve; explicit parameters and implicitCA are refused.
      if (!params) reject('an EC key must name its curve');
      if (params!.tag !== Tag.OID) reject('EC keys with explicit curve parameters are not supported');
      const curveOid = readOid(buf, params, `${field}.namedCurve`);
      const curve = CURVES[curveOid];
      if (!curve) reject(`unsupported EC curve ${curveOid} (P-256, P-384 and P-521 are supported)`);
      return { kind: 'EC', curve: curve! };
    }
    case OID.idEd25519:
    case OID.idEd448:
      // RFC 8410 §3: the parameters MUST be absent.
      if (params) reject(`${algorithm === OID.idEd25519 ? 'Ed25519' : 'Ed448'} parameters must be absent`);
      return { kind: 'Edwards', curve: algorithm === OID.idEd25519 ? ED25519 : ED448 };
    default: {
      const pq = postQuantumByOid(algorithm);
      // RFC 9881 §2 and RFC 9909 §3: the parameters MUST be absent.
      if (pq && params) reject(`${pq.name} parameters must be absent`);
      if (pq) return { kind: 'PQ', params: pq };
      return reject(REFUSED_ALGORITHMS[algorithm] ?? `unsupported public key algorithm ${algorithm}`);
    }
  }
}

function describe(alg: KeyAlgorithm, rsaBits: number): PublicKeyDescription {
  switch (alg.kind) {
    case 'RSA':
      return { type: 'RSA', bits: rsaBits };
    case 'EC':
      return { type: 'EC', curve: alg.curve.name };
    case 'Edwards':
      return { type: alg.curve.name };
    case 'PQ':
      return alg.params.family === 'ML-DSA'
        ? { type: 'ML-DSA', parameterSet: alg.params.name as MlDsaParameterSet }
        : { type: 'SLH-DSA', parameterSet: alg.params.name as SlhDsaParameterSet };
  }
}

function checkPublicKeyBits(alg: KeyAlgorithm, key: Uint8Array): PublicKeyDescription {
  if (alg.kind === 'RSA') return describe(alg, checkRsaPublicKey(key));
  if (alg.kind === 'EC') checkEcPoint(alg.curve, key);
  else if (alg.kind === 'Edwards') checkEdwardsPoint(alg.curve, key);
  // Any octets of the right length are a key of these schemes (FIPS 204 pkDecode, FIPS 205 §9.1).
  else if (key.length !== alg.params.publicKeyBytes)
    reject(`an ${alg.params.name} public key must be ${alg.params.publicKeyBytes} octets, not ${key.length}`);
  return describe(alg, 0);
}

/**
 * ML-DSA-PrivateKey (RFC 9881 §6): the 32-octet seed ([0] IMPLICIT), the expanded key, or both
 * in a SEQUENCE (what OpenSSL 3.5 writes). SLH-DSA (RFC 9909 §6): the raw 4n-octet key.
 */
function checkPostQuantumPrivateKey(params: PostQuantumParameters, key: Uint8Array): void {
  if (params.family === 'SLH-DSA') {
    if (key.length !== params.privateKeyBytes)
      reject(`an ${params.name} private key must be ${params.privateKeyBytes} octets`);
    return;
  }
  const root = readRoot(key);
  const seed = (node: DerNode | undefined): void => {
    if (content(key, node!).length !== ML_DSA_SEED_BYTES)
      reject(`an ${params.name} seed must be ${ML_DSA_SEED_BYTES} octets`);
  };
  const expanded = (node: DerNode | undefined): void => {
    if (
      content(key, expectTag(node, Tag.OCTET_STRING, 'ML-DSA expandedKey')).length !== params.privateKeyBytes
    )
      reject(`an ${params.name} expanded private key must be ${params.privateKeyBytes} octets`);
  };
  if (root.tag === 0x80) {
    seed(root);
    return;
  }
  if (root.tag === Tag.OCTET_STRING) {
    expanded(root);
    return;
  }
  const parts = children(key, expectTag(root, Tag.SEQUENCE, 'ML-DSA-PrivateKey'));
  if (parts.length !== 2) throw malformed('ML-DSA-PrivateKey', 'both must hold a seed and an expanded key');
  seed(expectTag(parts[0], Tag.OCTET_STRING, 'ML-DSA seed'));
  expanded(parts[1]);
}

/**
 * Checks a SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) and describes its key. Throws
 * `key_rejected` for an unsupported or unsafe key, `malformed` for bytes that are not one.
 * Safe to call on any bytes; only after it returned may the SPKI go to node:crypto.
 */
export function checkSubjectPublicKeyInfo(spki: Uint8Array): PublicKeyDescription {
  if (spki.length > KEY_CHECK_LIMITS.maxSpkiBytes)
    reject(`a SubjectPublicKeyInfo of ${spki.length} bytes exceeds ${KEY_CHECK_LIMITS.maxSpkiBytes} bytes`);
  const parts = children(spki, expectTag(readRoot(spki), Tag.SEQUENCE, 'subjectPublicKeyInfo'));
  if (parts.length !== 2) throw malformed('subjectPublicKeyInfo', 'must hold an algorithm and a key');
  const alg = readKeyAlgorithm(spki, parts[0], 'subjectPublicKeyInfo.algorithm');
  return checkPublicKeyBits(alg, readBitStringBytes(spki, parts[1], 'subjectPublicKey'));
}

// ---------------------------------------------------------------------------------------------
// Private keys

function checkRsaPrivateKey(der: Uint8Array): number {
  const parts = children(der, expectTag(readRoot(der), Tag.SEQUENCE, 'RSAPrivateKey'));
  // Version 1 adds otherPrimeInfos (multi-prime RSA), which certwright does not use.
  if (parts.length !== 9 || readSmallInteger(der, parts[0], 'RSAPrivateKey.version') !== 0)
    reject('only two-prime RSAPrivateKey (version 0) is supported');
  const [n, e, d, p, q, dp, dq, qinv] = parts
    .slice(1)
    .map((node, i) => readPositiveInteger(der, node, `RSAPrivateKey[${i + 1}]`)) as Uint8Array[];
  const bits = checkRsaNumbers(n!, e!);
  for (const v of [d!, p!, q!, dp!, dq!, qinv!])
    if (bitLength(v) === 0) reject('an RSA private value is zero');
  if (toBigInt(p!) * toBigInt(q!) !== toBigInt(n!)) reject('the RSA primes do not multiply to the modulus');
  return bits;
}

/** ECPrivateKey (RFC 5915 §3): 1 ≤ d < n, the curve (if repeated) the algorithm's, the public point valid. */
function checkEcPrivateKey(der: Uint8Array, curve: Curve, curveOid: string): void {
  const parts = children(der, expectTag(readRoot(der), Tag.SEQUENCE, 'ECPrivateKey'));
  if (readSmallInteger(der, parts[0], 'ECPrivateKey.version') !== 1) reject('ECPrivateKey version must be 1');
  const d = content(der, expectTag(parts[1], Tag.OCTET_STRING, 'ECPrivateKey.privateKey'));
  if (d.length > curve.size) reject(`an ${curve.name} private key must be at most ${curve.size} octets`);
  const scalar = toBigInt(d);
  if (scalar === 0n || scalar >= curve.n) reject(`the ${curve.name} private scalar is outside [1, n−1]`);
  let i = 2;
  if (parts[i]?.tag === 0xa0) {
    const inner = children(der, parts[i]!);
    if (inner.length !== 1 || readOid(der, inner[0], 'ECPrivateKey.parameters') !== curveOid)
      reject('ECPrivateKey parameters differ from the key algorithm');
    i++;
  }
  if (parts[i]?.tag === 0xa1) {
    const [bits, extra] = children(der, parts[i]!);
    if (extra) throw malformed('ECPrivateKey.publicKey', 'unexpected fields');
    checkEcPoint(curve, readBitStringBytes(der, bits, 'ECPrivateKey.publicKey'));
    i++;
  }
  if (i !== parts.length) throw malformed('ECPrivateKey', 'unexpected fields');
}

/**
 * Checks an unencrypted PKCS#8 PrivateKeyInfo / OneAsymmetricKey (RFC 5958) and describes its
 * public half, with the same algorithm rules as `checkSubjectPublicKeyInfo`. Only after
 * it returned may the bytes go to `createPrivateKey`.
 */
export function checkPrivateKeyInfo(pkcs8: Uint8Array): PublicKeyDescription {
  if (pkcs8.length > KEY_CHECK_LIMITS.maxPrivateKeyBytes)
    reject(`a private key of ${pkcs8.length} bytes exceeds ${KEY_CHECK_LIMITS.maxPrivateKeyBytes} bytes`);
  const parts = children(pkcs8, expectTag(readRoot(pkcs8), Tag.SEQUENCE, 'PrivateKeyInfo'));
  const version = readSmallInteger(pkcs8, parts[0], 'PrivateKeyInfo.version');
  if (version !== 0 && version !== 1) throw malformed('PrivateKeyInfo', `unknown version ${version}`);
  const algNode = parts[1];
  const alg = readKeyAlgorithm(pkcs8, algNode, 'privateKeyAlgorithm');
  const inner = content(pkcs8, expectTag(parts[2], Tag.OCTET_STRING, 'PrivateKeyInfo.privateKey'));
  let i = 3;
  if (parts[i]?.tag === 0xa0) i++; // attributes: not interpreted
  if (parts[i]?.tag === 0x81) {
    // OneAsymmetricKey publicKey [1] IMPLICIT BIT STRING
    const bits = content(pkcs8, parts[i]!);
    if (bits[0] !== 0) throw malformed('OneAsymmetricKey.publicKey', 'BIT STRING with unused bits');
    checkPublicKeyBits(alg, bits.subarray(1));
    i++;
  }
  if (i !== parts.length) throw malformed('PrivateKeyInfo', 'unexpected fields');
  switch (alg.kind) {
    case 'RSA':
      return describe(alg, checkRsaPrivateKey(inner));
    case 'EC': {
      const curveOid = readOid(pkcs8, children(pkcs8, algNode!)[1], 'namedCurve');
      checkEcPrivateKey(inner, alg.curve, curveOid);
      return describe(alg, 0);
    }
    case 'PQ':
      checkPostQuantumPrivateKey(alg.params, inner);
      return describe(alg, 0);
    case 'Edwards': {
      // RFC 8410 §7: CurvePrivateKey ::= OCTET STRING of the key's size.
      const seed = content(inner, expectTag(readRoot(inner), Tag.OCTET_STRING, 'CurvePrivateKey'));
      if (seed.length !== alg.curve.size)
        reject(`an ${alg.curve.name} private key must be ${alg.curve.size} octets`);
      return describe(alg, 0);
    }
  }
}
