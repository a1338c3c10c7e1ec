import { Tag } from '../../pki/der.js';
import { children, expectTag, readOid, readRoot, readUnsignedInteger } from '../../pki/der-reader.js';
import { OID } from '../../pki/oids.js';

/*
 * A SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) described for a person: "RSA 2048",
 * "ECDSA P-256", "Ed25519", "DSA 2048". Unlike the key check, this refuses nothing: a probe
 * reports what a server uses, weak or old keys included. Only the size fields are read — never
 * the key itself — so nothing here reaches node:crypto.
 */

const RSA_PSS = '1.2.840.113549.1.1.10';
const DSA = '1.2.840.10040.4.1';
const ED448 = '1.3.101.113';
const X25519 = '1.3.101.110';
const X448 = '1.3.101.111';

/** Named curves by OID (RFC 5480 §2.1.1.1, RFC 5639 §4.1, SEC 2). */
const CURVES: Readonly<Record<string, string>> = {
  '1.2.840.10045.3.1.7': 'P-256',
  '1.3.132.0.34': 'P-384',
  '1.3.132.0.35': 'P-521',
  '1.2.840.10045.3.1.1': 'P-192',
  '1.3.132.0.33': 'P-224',
  '1.3.132.0.10': 'secp256k1',
  '1.3.36.3.3.2.8.1.1.7': 'brainpoolP256r1',
  '1.3.36.3.3.2.8.1.1.11': 'brainpoolP384r1',
  '1.3.36.3.3.2.8.1.1.13': 'brainpoolP512r1',
};

/** Bit length of a big-endian unsigned magnitude (leading zero octets ignored). */
export function bitLength(magnitude: Uint8Array): number {
  let i = 0;
  while (i < magnitude.length && magnitude[i] === 0) i++;
  if (i === magnitude.length) return 0;
  return (magnitude.length - i - 1) * 8 + (32 - Math.clz32(magnitude[i]!));
}

/** RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER } (RFC 8017 §A.1.1). */
function rsaModulusBits(publicKeyBits: Uint8Array): number {
  const [modulus] = children(publicKeyBits, expectTag(readRoot(publicKeyBits), Tag.SEQUENCE, 'RSAPublicKey'));
  return bitLength(readUnsignedInteger(publicKeyBits, modulus, 'RSAPublicKey.modulus'));
}

/**
 * Describes the key of a SubjectPublicKeyInfo (`spki`, its DER) whose subjectPublicKey BIT
 * STRING holds `publicKeyBits`. Throws `malformed` only for structures that do not parse.
 */
export function describeKey(spki: Uint8Array, publicKeyBits: Uint8Array): string {
  const [algorithmNode] = children(spki, expectTag(readRoot(spki), Tag.SEQUENCE, 'subjectPublicKeyInfo'));
  const [oidNode, params] = children(spki, expectTag(algorithmNode, Tag.SEQUENCE, 'algorithm'));
  const algorithm = readOid(spki, oidNode, 'algorithm');
  switch (algorithm) {
    case OID.rsaEncryption:
      return `RSA ${rsaModulusBits(publicKeyBits)}`;
    case RSA_PSS:
      return `RSA-PSS ${rsaModulusBits(publicKeyBits)}`;
    case OID.idEcPublicKey: {
      if (params?.tag !== Tag.OID) return 'ECDSA (explicit curve parameters)';
      const curve = readOid(spki, params, 'namedCurve');
      return `ECDSA ${CURVES[curve] ?? curve}`;
    }
    case OID.idEd25519:
      return 'Ed25519';
    case ED448:
      return 'Ed448';
    case X25519:
      return 'X25519';
    case X448:
      return 'X448';
    case DSA: {
      // Dss-Parms ::= SEQUENCE { p, q, g } (RFC 3279 §2.3.2); absent when inherited from the issuer.
      if (params?.tag !== Tag.SEQUENCE) return 'DSA';
      const [p] = children(spki, params);
      return `DSA ${bitLength(readUnsignedInteger(spki, p, 'Dss-Parms.p'))}`;
    }
    default:
      return `unknown (${algorithm})`;
  }
}
