/**
 * @certwright/core/pki — keys, PEM/DER, PKCS#10, certificates, CRLs, OCSP and PKCS#12 as
 * plain functions: no storage, no HTTP, no global state.
 */

export {
  type AcmeCertId,
  authorityKeyIdentifierOf,
  formatAcmeCertId,
  MAX_CERT_ID_LENGTH,
  parseAcmeCertId,
} from './acme-cert-id.js';
export {
  type CertificateTemplate,
  certificateToPem,
  createSelfSignedCertificate,
  type IssuedCertificate,
  type IssuingAuthority,
  issueCertificate,
  prepareIssuer,
  randomSerialNumber,
} from './certificate.js';
export {
  type CertificateDetails,
  describeCertificate,
  describeCertificates,
  describeEach,
  MAX_DESCRIBED_CERTIFICATES,
  type NameDetails,
  type SubjectAltNames,
  signatureAlgorithmOf,
} from './certificate-details.js';
export {
  type CertificateInfo,
  DEFAULT_CERTIFICATE_LIMITS,
  keyIdentifierOf,
  readCertificate,
  serialToHex,
} from './certificate-info.js';
export { certificateInfo } from './cms/certificate-cache.js';
export type { ContentEncryption } from './cms/content-encryption.js';
export {
  type BuildEnvelopedDataOptions,
  buildEnvelopedData,
  describeEnvelopedData,
  type EnvelopedDataInfo,
  type EnvelopeRecipient,
  type KeyTransRecipient,
  type OpenEnvelopedDataOptions,
  openEnvelopedData,
} from './cms/enveloped-data.js';
export { cmsLimits, DEFAULT_CMS_LIMITS } from './cms/limits.js';
export { CMS_OID } from './cms/oids.js';
export { rsaPkcs1v15Decrypt, rsaPkcs1v15DecryptMode } from './cms/rsa-pkcs1-decrypt.js';
export {
  attributeValues,
  type BuildSignedDataOptions,
  buildCertsOnly,
  buildSignedData,
  type CmsAttribute,
  type CmsDigest,
  type CmsSigner,
  type CmsSignerInfo,
  cmsDigestName,
  encodeAttribute,
  type ParsedSignedData,
  parseCertsOnly,
  parseSignedData,
  type VerifiedSigner,
  verifySignerInfo,
} from './cms/signed-data.js';
export {
  type CmsIdentifier,
  type IssuerAndSerialNumber,
  identifies,
  issuerAndSerialOf,
} from './cms/structure.js';
export {
  type BuildCrlOptions,
  buildCrl,
  type CrlEntry,
  checkEncodedEntries,
  crlToPem,
  encodeCrlEntry,
  REVOCATION_REASON_CODES,
  type RevocationReason,
  revocationReasonName,
} from './crl.js';
export {
  type CertificationRequest,
  type CsrLimits,
  DEFAULT_CSR_LIMITS,
  parseCertificationRequest,
} from './csr.js';
export { type CsrAttributes, csrAttributesFor } from './csr-attributes.js';
export {
  type CertificationRequestTemplate,
  certificationRequestToPem,
  createCertificationRequest,
} from './csr-builder.js';
export * as der from './der.js';
export * as derReader from './der-reader.js';
export {
  authorityInfoAccessValue,
  authorityKeyIdentifierValue,
  type BasicConstraints,
  basicConstraintsValue,
  crlDistributionPointsValue,
  decodeAuthorityInfoAccess,
  decodeAuthorityKeyIdentifier,
  decodeBasicConstraints,
  decodeCertificatePolicies,
  decodeCrlDistributionPoints,
  decodeExtensions,
  decodeExtKeyUsage,
  decodeGeneralName,
  decodeKeyUsage,
  decodeSubjectAltName,
  decodeSubjectKeyIdentifier,
  encodeGeneralName,
  extKeyUsageValue,
  KEY_USAGE_BITS,
  type KeyUsage,
  keyUsageValue,
  mustStapleValue,
  noRevAvailValue,
  type OtherGeneralName,
  ocspNoCheckValue,
  type RawExtension,
  type SubjectAltName,
  subjectAltNameValue,
  subjectKeyIdentifierValue,
} from './extensions.js';
export { bytesToIp, ipToBytes } from './ip.js';
export {
  decodeBase64Url,
  jwkThumbprint,
  type ParsedPublicJwk,
  parsePublicJwk,
  spkiToPublicJwk,
} from './jwk.js';
export {
  defaultJwsAlgorithm,
  JWS_SIGNATURE_ALGORITHMS,
  type JwsSignatureAlgorithm,
  jwsAlgorithmFitsKey,
  signJws,
  verifyJwsSignature,
} from './jws-signature.js';
export type { PublicKeyDescription } from './key-check.js';
export {
  describePublicKey,
  exportPkcs8Der,
  exportPkcs8Pem,
  exportSpkiDer,
  exportSpkiPem,
  generateKeyPair,
  importPkcs8Der,
  importPkcs8Pem,
  importSpkiDer,
  importSpkiPem,
  KEY_ALGORITHMS,
  type KeyAlgorithm,
  type KeyPair,
  keyAlgorithmName,
} from './keys.js';
export {
  type DecodedName,
  type DistinguishedName,
  decodeName,
  encodeName,
  formatName,
  NAME_LIMITS,
  type NameAttribute,
  parseDistinguishedName,
} from './name.js';
export {
  type NameConstraint,
  type NameConstraints,
  nameConstraintsExtension,
  nameConstraintsValue,
} from './name-constraints.js';
export {
  assertCertificateNames,
  lintCertificateNames,
  type NameLintInput,
  type NameLintResult,
  type NameProblem,
  type NameProblemCode,
  nameLintError,
} from './name-lint.js';
export {
  buildCertId,
  type CertIdHash,
  certIdMatcher,
  DEFAULT_OCSP_REQUEST_LIMITS,
  type IssuerHashes,
  issuerHashes,
  type OcspCertId,
  type OcspRequest,
  OcspRequestError,
  type OcspRequestLimits,
  parseOcspRequest,
} from './ocsp-request.js';
export {
  type BuildOcspResponseOptions,
  buildOcspErrorResponse,
  buildOcspResponse,
  OCSP_RESPONSE_STATUS,
  type OcspCertStatus,
  type OcspErrorStatus,
  type OcspResponder,
  type OcspSingleResponse,
  prepareOcspResponder,
} from './ocsp-response.js';
export { EKU_OIDS, type ExtendedKeyUsage, NAME_ATTRIBUTE_OIDS, OID } from './oids.js';
export {
  DEFAULT_PEM_LIMITS,
  decodeBase64Strict,
  type PemBlock,
  type PemLabel,
  type PemLimits,
  pemDecode,
  pemDecodeAll,
  pemDecodeCertificates,
  pemEncode,
} from './pem.js';
export {
  exportPkcs12,
  PKCS12_DEFAULT_ITERATIONS,
  PKCS12_MIN_PASSWORD_LENGTH,
  type Pkcs12Options,
  pkcs12Kdf,
} from './pkcs12.js';
export {
  isPostQuantumParameterSet,
  ML_DSA_PARAMETER_SETS,
  type MlDsaParameterSet,
  POST_QUANTUM_PARAMETER_SETS,
  type PostQuantumParameterSet,
  type PostQuantumParameters,
  postQuantumByName,
  postQuantumByOid,
  SLH_DSA_PARAMETER_SETS,
  type SlhDsaParameterSet,
} from './post-quantum.js';
export { type PostQuantumRuntime, postQuantumRuntime } from './post-quantum-runtime.js';
export { buildCertRep, type CertRepOptions } from './scep/cert-rep.js';
export { buildScepRequest, type CertRep, readCertRep, type ScepRequestOptions } from './scep/client.js';
export { assertAnswerable, parseScepRequest, SCEP_MESSAGE_LIMITS, type ScepRequest } from './scep/message.js';
export {
  SCEP_FAIL_INFO,
  SCEP_MESSAGE_TYPES,
  SCEP_NONCE_LENGTH,
  SCEP_OID,
  SCEP_PKI_STATUS,
  type ScepFailInfo,
  type ScepMessageType,
  type ScepPkiStatus,
} from './scep/oids.js';
export {
  type HashName,
  type PrivateSigningKey,
  type SignatureAlgorithm,
  signatureAlgorithmFor,
  signatureAlgorithmName,
  signData,
  signingKeySpki,
  verifySignature,
} from './signature.js';
export { isSigningKey, SIGN_MECHANISMS, type SigningKey, type SignMechanism } from './signing-key.js';
export {
  type ChainOptions,
  DEFAULT_TRUST_BUNDLE_LIMITS,
  MAX_CLIENT_CHAIN_LENGTH,
  parseTrustBundle,
  type TrustAnchor,
  TrustBundle,
  type TrustBundleLimits,
  type VerifiedChain,
  verifyClientChain,
} from './trust-bundle.js';
