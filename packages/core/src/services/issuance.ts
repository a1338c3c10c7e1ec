/**
 * The issuing pipeline's public surface; the parts live in ./issuance/:
 * - `connector-cache.ts`: one connector per issuer, rebuilt when the issuer record changes;
 * - `profile-rules.ts`, `certificate-request.ts`: what a profile allows, what gets signed;
 * - `signing.ts`: the last checks before a signature, the signature, the stored version;
 * - `open-job.ts`: the one way an Issuance or Renewal job is opened;
 * - `lifecycle.ts`: issue, renew and the issuance worker; `enrollment.ts`: ACME/EST/SCEP issuance;
 * - `export.ts`: PEM, DER and PKCS#12 export, CA chains.
 */
export { subjectAltNamesOf } from './certificate-names.js';
export { DEFAULT_MAX_VALIDITY_DAYS_WITHOUT_PROFILE } from './issuance/certificate-request.js';
export { IssuerConnectorCache } from './issuance/connector-cache.js';
export type { ExportedFile } from './issuance/export.js';
export { type IssueOutcome, type LifecycleOptions, LifecycleService } from './issuance/lifecycle.js';
export {
  exportFormatSchema,
  type IssueInput,
  issueRequestSchema,
  pkcs12ExportSchema,
} from './issuance/schemas.js';
export type { IssuanceHooks } from './issuance/signing.js';
