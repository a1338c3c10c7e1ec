/**
 * The post-quantum signature parameter sets certwright reads, writes and signs with: ML-DSA
 * (FIPS 204) as RFC 9881 puts it in X.509, and SLH-DSA (FIPS 205) as RFC 9909 does. Both are
 * used pure, with the empty context string; their AlgorithmIdentifier has no parameters, the
 * same OID names the key and the signature, and the public key is the raw encoded key. Every
 * length is fixed per parameter set, so the readers accept exactly these sizes and nothing else.
 */

export const ML_DSA_PARAMETER_SETS = ['ML-DSA-44', 'ML-DSA-65', 'ML-DSA-87'] as const;
export type MlDsaParameterSet = (typeof ML_DSA_PARAMETER_SETS)[number];

export const SLH_DSA_PARAMETER_SETS = [
  'SLH-DSA-SHA2-128S',
  'SLH-DSA-SHA2-128F',
  'SLH-DSA-SHA2-192S',
  'SLH-DSA-SHA2-192F',
  'SLH-DSA-SHA2-256S',
  'SLH-DSA-SHA2-256F',
  'SLH-DSA-SHAKE-128S',
  'SLH-DSA-SHAKE-128F',
  'SLH-DSA-SHAKE-192S',
  'SLH-DSA-SHAKE-192F',
  'SLH-DSA-SHAKE-256S',
  'SLH-DSA-SHAKE-256F',
] as const;
export type SlhDsaParameterSet = (typeof SLH_DSA_PARAMETER_SETS)[number];

export type PostQuantumParameterSet = MlDsaParameterSet | SlhDsaParameterSet;

export const POST_QUANTUM_PARAMETER_SETS: readonly PostQuantumParameterSet[] = [
  ...ML_DSA_PARAMETER_SETS,
  ...SLH_DSA_PARAMETER_SETS,
];

export interface PostQuantumParameters {
  name: PostQuantumParameterSet;
  family: 'ML-DSA' | 'SLH-DSA';
  /** Names both the key (SPKI, PKCS#8) and the signature algorithm. */
  oid: string;
  /** node:crypto's key type (`KeyObject.asymmetricKeyType`, `generateKeyPair` type). */
  nodeType: string;
  publicKeyBytes: number;
  signatureBytes: number;
  /** The private key: SLH-DSA's SK.seed‖SK.prf‖PK (4n octets); ML-DSA's expanded key. */
  privateKeyBytes: number;
}

const mlDsa = (
  level: 44 | 65 | 87,
  arc: number,
  pk: number,
  sig: number,
  sk: number,
): PostQuantumParameters => ({
  name: `ML-DSA-${level}`,
  family: 'ML-DSA',
  oid: `2.16.840.1.101.3.4.3.${arc}`,
  nodeType: `ml-dsa-${level}`,
  publicKeyBytes: pk,
  signatureBytes: sig,
  privateKeyBytes: sk,
});

// FIPS 205 Table 2: n is 16, 24 or 32 octets; pk = 2n, sk = 4n; signature sizes per set.
const slhDsa = (name: SlhDsaParameterSet, arc: number, n: number, sig: number): PostQuantumParameters => ({
  name,
  family: 'SLH-DSA',
  oid: `2.16.840.1.101.3.4.3.${arc}`,
  nodeType: name.toLowerCase(),
  publicKeyBytes: 2 * n,
  signatureBytes: sig,
  privateKeyBytes: 4 * n,
});

/** FIPS 204 Table 2 sizes; OIDs from RFC 9881 §2 and RFC 9909 §3 (NIST's sigAlgs arc). */
const TABLE: readonly PostQuantumParameters[] = [
  mlDsa(44, 17, 1312, 2420, 2560),
  mlDsa(65, 18, 1952, 3309, 4032),
  mlDsa(87, 19, 2592, 4627, 4896),
  slhDsa('SLH-DSA-SHA2-128S', 20, 16, 7856),
  slhDsa('SLH-DSA-SHA2-128F', 21, 16, 17_088),
  slhDsa('SLH-DSA-SHA2-192S', 22, 24, 16_224),
  slhDsa('SLH-DSA-SHA2-192F', 23, 24, 35_664),
  slhDsa('SLH-DSA-SHA2-256S', 24, 32, 29_792),
  slhDsa('SLH-DSA-SHA2-256F', 25, 32, 49_856),
  slhDsa('SLH-DSA-SHAKE-128S', 26, 16, 7856),
  slhDsa('SLH-DSA-SHAKE-128F', 27, 16, 17_088),
  slhDsa('SLH-DSA-SHAKE-192S', 28, 24, 16_224),
  slhDsa('SLH-DSA-SHAKE-192F', 29, 24, 35_664),
  slhDsa('SLH-DSA-SHAKE-256S', 30, 32, 29_792),
  slhDsa('SLH-DSA-SHAKE-256F', 31, 32, 49_856),
];

const BY_OID = new Map(TABLE.map((p) => [p.oid, p]));
const BY_NAME = new Map(TABLE.map((p) => [p.name as string, p]));

/** The parameter set an OID names, or undefined when it names none. */
export const postQuantumByOid = (oid: string): PostQuantumParameters | undefined => BY_OID.get(oid);

/** The parameters of a parameter set by its name (`ML-DSA-65`, `SLH-DSA-SHA2-128S` …). */
export const postQuantumByName = (name: string): PostQuantumParameters | undefined => BY_NAME.get(name);

export const isPostQuantumParameterSet = (name: string): name is PostQuantumParameterSet => BY_NAME.has(name);

/** ML-DSA's private key seed ξ (FIPS 204 Algorithm 1), the first choice of RFC 9881 §6. */
export const ML_DSA_SEED_BYTES = 32;
