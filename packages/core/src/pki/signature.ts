import { type KeyObject, sign, verify } from 'node:crypto';
import { fail } from '../errors.js';
import { algorithmIdentifier, NULL } from './der.js';
import { describePublicKey, exportSpkiDer, importSpkiDer } from './keys.js';
import { OID } from './oids.js';
import { POST_QUANTUM_PARAMETER_SETS, postQuantumByName } from './post-quantum.js';
import { isSigningKey, type SigningKey, type SignMechanism } from './signing-key.js';

/**
 * Signature algorithms: choosing one for an issuer key, producing the AlgorithmIdentifier
 * bytes, signing, and verifying signatures found in requests.
 */

export type HashName = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface SignatureAlgorithm {
  /** RFC name, e.g. `sha256WithRSAEncryption`, `ecdsa-with-SHA384`, `Ed25519`. */
  name: string;
  oid: string;
  /** node:crypto digest name; null for Ed25519/Ed448, ML-DSA and SLH-DSA, which sign the message itself. */
  hash: HashName | null;
  /** DER AlgorithmIdentifier as it appears in certificates, CRLs and OCSP responses. */
  identifier: Buffer;
  /** What a key custody is asked to perform. */
  mechanism: SignMechanism;
}

/** A private key in this process, or one held by a key custody. */
export type PrivateSigningKey = KeyObject | SigningKey;

/** SubjectPublicKeyInfo DER of a signing key's public half. */
export const signingKeySpki = (key: PrivateSigningKey): Buffer =>
  isSigningKey(key) ? Buffer.from(key.spki) : exportSpkiDer(key);

const RSA_HASH_OID: Record<Exclude<HashName, 'sha1'>, string> = {
  sha256: OID.sha256WithRSAEncryption,
  sha384: OID.sha384WithRSAEncryption,
  sha512: OID.sha512WithRSAEncryption,
};

/**
 * The signature algorithm for an issuer key: sha256WithRSAEncryption for RSA (or a larger
 * SHA-2 when asked), ECDSA with the hash matching the curve size (RFC 5480 §4), Ed25519.
 */
export function signatureAlgorithmFor(
  key: PrivateSigningKey,
  rsaHash: Exclude<HashName, 'sha1'> = 'sha256',
): SignatureAlgorithm {
  const description = describePublicKey(isSigningKey(key) ? key.spki : key);
  switch (description.type) {
    case 'RSA': {
      const oid = RSA_HASH_OID[rsaHash];
      // RFC 4055 §5: the parameters of the PKCS#1 v1.5 signature OIDs are NULL.
      return {
        name: `${rsaHash}WithRSAEncryption`,
        oid,
        hash: rsaHash,
        identifier: algorithmIdentifier(oid, NULL),
        mechanism: `RSA-PKCS1-${rsaHash.toUpperCase()}` as SignMechanism,
      };
    }
    case 'EC': {
      const curve = description.curve;
      const hash: HashName = curve === 'P-384' ? 'sha384' : curve === 'P-521' ? 'sha512' : 'sha256';
      const oid = { sha256: OID.ecdsaWithSHA256, sha384: OID.ecdsaWithSHA384, sha512: OID.ecdsaWithSHA512 }[
        hash
      ];
      // RFC 5758 §3.2: the ECDSA signature AlgorithmIdentifier has no parameters at all.
      return {
        name: `ecdsa-with-${hash.toUpperCase()}`,
        oid,
        hash,
        identifier: algorithmIdentifier(oid),
        mechanism: `ECDSA-${hash.toUpperCase()}` as SignMechanism,
      };
    }
    case 'Ed25519':
      return {
        name: 'Ed25519',
        oid: OID.idEd25519,
        hash: null,
        identifier: algorithmIdentifier(OID.idEd25519),
        mechanism: 'Ed25519',
      };
    case 'ML-DSA':
    case 'SLH-DSA': {
      // RFC 9881 §3 and RFC 9909 §3: pure mode, empty context, parameters absent.
      const pq = postQuantumByName(description.parameterSet)!;
      return {
        name: pq.name,
        oid: pq.oid,
        hash: null,
        identifier: algorithmIdentifier(pq.oid),
        mechanism: pq.name,
      };
    }
    default:
      throw fail('key_rejected', `cannot sign with an ${description.type} key`);
  }
}

/** Signs `data`; ECDSA signatures come out DER-encoded (Ecdsa-Sig-Value), as X.509 wants. */
export function signData(alg: SignatureAlgorithm, key: PrivateSigningKey, data: Uint8Array): Buffer {
  if (isSigningKey(key)) return key.sign(alg.mechanism, data);
  return sign(alg.hash, data, key);
}

/** Verification parameters for signature OIDs accepted in requests (PKCS#10). */
const VERIFY: Record<string, { name: string; hash: HashName | null; key: string; signatureBytes?: number }> =
  {
    [OID.sha1WithRSAEncryption]: { name: 'sha1WithRSAEncryption', hash: 'sha1', key: 'rsa' },
    [OID.sha256WithRSAEncryption]: { name: 'sha256WithRSAEncryption', hash: 'sha256', key: 'rsa' },
    [OID.sha384WithRSAEncryption]: { name: 'sha384WithRSAEncryption', hash: 'sha384', key: 'rsa' },
    [OID.sha512WithRSAEncryption]: { name: 'sha512WithRSAEncryption', hash: 'sha512', key: 'rsa' },
    [OID.ecdsaWithSHA1]: { name: 'ecdsa-with-SHA1', hash: 'sha1', key: 'ec' },
    [OID.ecdsaWithSHA256]: { name: 'ecdsa-with-SHA256', hash: 'sha256', key: 'ec' },
    [OID.ecdsaWithSHA384]: { name: 'ecdsa-with-SHA384', hash: 'sha384', key: 'ec' },
    [OID.ecdsaWithSHA512]: { name: 'ecdsa-with-SHA512', hash: 'sha512', key: 'ec' },
    [OID.idEd25519]: { name: 'Ed25519', hash: null, key: 'ed25519' },
    [OID.idEd448]: { name: 'Ed448', hash: null, key: 'ed448' },
    ...Object.fromEntries(
      POST_QUANTUM_PARAMETER_SETS.map((name) => {
        const pq = postQuantumByName(name)!;
        return [pq.oid, { name, hash: null, key: pq.nodeType, signatureBytes: pq.signatureBytes }];
      }),
    ),
  };

/** Name of a signature algorithm OID, or undefined when certwright cannot verify it. */
export const signatureAlgorithmName = (oid: string): string | undefined => VERIFY[oid]?.name;

/**
 * Verifies a signature made with the algorithm `oid` by the key in `spki`. Returns false for
 * a bad signature; throws `signature_algorithm_not_allowed` for an algorithm we do not accept
 * (including RSASSA-PSS, which no enrollment client we support sends) or a key/algorithm
 * mismatch, and `key_rejected`/`malformed` for key bytes that fail the key check.
 */
export function verifySignature(
  oid: string,
  spki: Uint8Array | KeyObject,
  data: Uint8Array,
  signature: Uint8Array,
): boolean {
  const v = VERIFY[oid];
  if (!v) throw fail('signature_algorithm_not_allowed', `unsupported signature algorithm ${oid}`);
  // A post-quantum signature has one length per parameter set (FIPS 204 Table 2, FIPS 205 Table 2).
  if (v.signatureBytes !== undefined && signature.length !== v.signatureBytes) return false;
  const key = spki instanceof Uint8Array ? importSpkiDer(spki) : spki;
  if (key.asymmetricKeyType !== v.key) {
    throw fail(
      'signature_algorithm_not_allowed',
      `signature algorithm ${v.name} does not match a ${key.asymmetricKeyType} key`,
    );
  }
  try {
    return verify(v.hash, data, key, signature);
  } catch {
    // A malformed ECDSA signature value makes OpenSSL raise instead of returning false.
    return false;
  }
}
