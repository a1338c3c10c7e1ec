import { z } from 'zod';
import { idSchema, stringMapSchema, timestampSchema } from './common.js';

export const CERTIFICATE_STATUSES = [
  'Pending',
  'Active',
  'Expiring',
  'Expired',
  'RenewalInProgress',
  'Failed',
  'Revoked',
  'Archived',
] as const;
export const certificateStatusSchema = z.enum(CERTIFICATE_STATUSES);
export type CertificateStatus = z.infer<typeof certificateStatusSchema>;

/** Provenance; the empty string is "unspecified" and means "any" in bulk revoke. */
export const CERTIFICATE_SOURCES = ['', 'EST', 'SCEP', 'API', 'Agent', 'ACME'] as const;
export const certificateSourceSchema = z.enum(CERTIFICATE_SOURCES);
export type CertificateSource = z.infer<typeof certificateSourceSchema>;

/** RFC 5280 CRLReason names; codes 7 and 8/10 are unused or mapped elsewhere. */
export const REVOCATION_REASONS = [
  'unspecified',
  'keyCompromise',
  'caCompromise',
  'affiliationChanged',
  'superseded',
  'cessationOfOperation',
  'certificateHold',
  'privilegeWithdrawn',
  'aACompromise',
] as const;
export const revocationReasonSchema = z.enum(REVOCATION_REASONS);
export type RevocationReason = z.infer<typeof revocationReasonSchema>;

/** RFC 5280 numeric reason code of each name. */
export const REVOCATION_REASON_CODES: Readonly<Record<RevocationReason, number>> = {
  unspecified: 0,
  keyCompromise: 1,
  caCompromise: 2,
  affiliationChanged: 3,
  superseded: 4,
  cessationOfOperation: 5,
  certificateHold: 6,
  privilegeWithdrawn: 9,
  aACompromise: 10,
};

export const managedCertificateSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  common_name: z.string().min(1).max(255),
  sans: z.array(z.string().min(1).max(255)),
  status: certificateStatusSchema,
  source: certificateSourceSchema,
  issuer_id: idSchema,
  owner_id: idSchema,
  team_id: idSchema,
  renewal_policy_id: idSchema,
  profile_id: idSchema.nullable(),
  environment: z.string().max(64).nullable(),
  metadata: stringMapSchema,
  tags: z.array(z.string().min(1).max(64)),
  /** Latest version, kept on the certificate so inventory filters never scan versions. */
  current_version_id: idSchema.nullable(),
  /** not_after of the latest version (null until one is issued); drives expiry filters. */
  expires_at: timestampSchema.nullable(),
  last_renewal_at: timestampSchema.nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type ManagedCertificate = z.infer<typeof managedCertificateSchema>;

export const certificateVersionSchema = z.object({
  id: idSchema,
  certificate_id: idSchema,
  /** Issuer that signed this version; CRL and OCSP look versions up by (issuer, serial). */
  issuer_id: idSchema,
  /** Lower-case hex without separators or leading zeros beyond one byte. */
  serial_number: z.string().regex(/^[0-9a-f]{1,64}$/),
  fingerprint_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  key_algorithm: z.string().min(1).max(32),
  /** Bits for RSA and EC (256 for P-256), 0 when the algorithm has no size parameter. */
  key_size: z.number().int().min(0),
  subject: z.string().max(1024),
  issued_at: timestampSchema,
  not_before: timestampSchema,
  not_after: timestampSchema,
  csr_pem: z.string().nullable(),
  cert_pem: z.string().min(1),
  chain_pem: z.string(),
  revoked_at: timestampSchema.nullable(),
  revocation_reason: revocationReasonSchema.nullable(),
  invalidity_date: timestampSchema.nullable(),
  created_at: timestampSchema,
});
export type CertificateVersion = z.infer<typeof certificateVersionSchema>;

/** A version plus its private key, only for services that explicitly ask (export, deploy). */
export interface CertificateVersionWithKey extends CertificateVersion {
  /** PKCS#8 PEM, decrypted; null when the key is held elsewhere (agent-side generation). */
  private_key_pem: string | null;
}

export type CertificateSortField =
  | 'name'
  | 'common_name'
  | 'status'
  | 'expires_at'
  | 'created_at'
  | 'updated_at';
