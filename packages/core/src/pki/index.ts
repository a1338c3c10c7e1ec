/**
 * @certwright/core/pki — keys, PEM/DER, PKCS#10, certificates, CRLs, OCSP and PKCS#12 as
 * plain functions: no storage, no HTTP, no global state.
 */

export * from './certificate.js';
export * from './certificate-details.js';
export * from './certificate-info.js';
export * from './cms/index.js';
export * from './crl.js';
export * from './csr.js';
export * from './csr-builder.js';
export * as der from './der.js';
export * as derReader from './der-reader.js';
export * from './extensions.js';
export * from './ip.js';
export * from './jwk.js';
export * from './jws-signature.js';
export * from './keys.js';
export * from './name.js';
export * from './name-constraints.js';
export * from './name-lint.js';
export * from './ocsp-request.js';
export * from './ocsp-response.js';
export * from './oids.js';
export * from './pem.js';
export * from './pkcs12.js';
export * from './scep/index.js';
export * from './signature.js';
export * from './signing-key.js';
export * from './trust-bundle.js';
