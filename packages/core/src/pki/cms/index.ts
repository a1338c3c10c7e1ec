/**
 * CMS (RFC 5652) for the enrollment protocols: certificates-only SignedData, SignedData with
 * one signer, EnvelopedData with RSA key transport. DER in, DER out; untrusted input is bounded
 * and parsed by our own reader (BER accepted and rewritten as DER first). See docs/pki.md.
 */
export type { ContentEncryption } from './content-encryption.js';
export {
  type BuildEnvelopedDataOptions,
  buildEnvelopedData,
  describeEnvelopedData,
  type EnvelopedDataInfo,
  type EnvelopeRecipient,
  type KeyTransRecipient,
  type OpenEnvelopedDataOptions,
  openEnvelopedData,
} from './enveloped-data.js';
export { cmsLimits, DEFAULT_CMS_LIMITS } from './limits.js';
export { CMS_OID } from './oids.js';
export { rsaPkcs1v15Decrypt, rsaPkcs1v15DecryptMode } from './rsa-pkcs1-decrypt.js';
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
} from './signed-data.js';
export {
  type CmsIdentifier,
  type IssuerAndSerialNumber,
  identifies,
  issuerAndSerialOf,
} from './structure.js';
