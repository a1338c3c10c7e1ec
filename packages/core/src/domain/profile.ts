import { z } from 'zod';
import { ML_DSA_PARAMETER_SETS, SLH_DSA_PARAMETER_SETS } from '../pki/post-quantum.js';
import { idSchema, timestampSchema } from './common.js';

export const EXTENDED_KEY_USAGES = [
  'serverAuth',
  'clientAuth',
  'codeSigning',
  'emailProtection',
  'timeStamping',
] as const;
export const extendedKeyUsageSchema = z.enum(EXTENDED_KEY_USAGES);
export type ExtendedKeyUsage = z.infer<typeof extendedKeyUsageSchema>;

export const KEY_ALGORITHMS = ['RSA', 'ECDSA', 'Ed25519', 'ML-DSA', 'SLH-DSA'] as const;
export const keyAlgorithmSchema = z.enum(KEY_ALGORITHMS);
export type KeyAlgorithm = z.infer<typeof keyAlgorithmSchema>;

export const EC_CURVES = ['P-256', 'P-384', 'P-521'] as const;

/**
 * One allowed algorithm with its permitted parameters (RSA sizes, EC curves, ML-DSA or SLH-DSA
 * parameter sets). A profile allowing only ML-DSA/SLH-DSA requires post-quantum subject keys.
 */
export const allowedKeyAlgorithmSchema = z.discriminatedUnion('algorithm', [
  z.object({ algorithm: z.literal('RSA'), sizes: z.array(z.number().int().min(2048).max(16384)).min(1) }),
  z.object({ algorithm: z.literal('ECDSA'), curves: z.array(z.enum(EC_CURVES)).min(1) }),
  z.object({ algorithm: z.literal('Ed25519') }),
  z.object({ algorithm: z.literal('ML-DSA'), parameter_sets: z.array(z.enum(ML_DSA_PARAMETER_SETS)).min(1) }),
  z.object({
    algorithm: z.literal('SLH-DSA'),
    parameter_sets: z.array(z.enum(SLH_DSA_PARAMETER_SETS)).min(1),
  }),
]);
export type AllowedKeyAlgorithm = z.infer<typeof allowedKeyAlgorithmSchema>;

/** Where the private key is generated: by the agent (job starts AwaitingCSR) or the server. */
export const keyGenerationModeSchema = z.enum(['agent', 'server']);
export type KeyGenerationMode = z.infer<typeof keyGenerationModeSchema>;

export const certificateProfileSchema = z.object({
  id: idSchema,
  /** Unique across profiles. */
  name: z.string().min(1).max(255),
  description: z.string().max(2000).nullable(),
  allowed_key_algorithms: z.array(allowedKeyAlgorithmSchema),
  allowed_ekus: z.array(extendedKeyUsageSchema),
  /** EKU names, DN attribute names, PKCS#10 attribute names or `serialNumber`. */
  required_csr_attributes: z.array(z.string().min(1).max(128)),
  must_staple: z.boolean(),
  /**
   * Whether certificates under this profile may name IP addresses (iPAddress SANs, an IP common
   * name, ACME `ip` identifiers). New profiles default to false; docs/api/inventory.md.
   */
  allow_ip_sans: z.boolean(),
  /**
   * Certificates whose lifetime from issuance is at most this many hours are short-lived
   * (RFC 9608): noRevAvail, no CRL distribution point or OCSP URL, and revocation is refused.
   * Null: none are. docs/pki.md, "Short-lived certificates".
   */
  short_lived_validity_hours: z.number().int().min(1).max(720).nullable(),
  max_validity_days: z.number().int().min(1).max(3650),
  key_generation: keyGenerationModeSchema,
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
/** A profile with its enrollment settings (see below). */
export type CertificateProfile = z.infer<typeof certificateProfileSchema> & ProfileEnrollment;

// ---------------------------------------------------------------------------------------------
// Enrollment settings: what an enrollment protocol (ACME, EST, SCEP) gives the certificates it
// creates under a profile, and one settings block per protocol. docs/api/inventory.md
// ("Enrollment settings") describes the shape; a new protocol adds its block here, its secret
// fields to ENROLLMENT_SECRET_FIELDS, and its defaults to DEFAULT_PROTOCOL_SETTINGS.

/** Owner, team, issuer and renewal policy of every certificate a protocol creates. */
export const enrollmentDefaultsSchema = z.object({
  issuer_id: idSchema.nullable(),
  owner_id: idSchema.nullable(),
  team_id: idSchema.nullable(),
  renewal_policy_id: idSchema.nullable(),
});
export type EnrollmentDefaults = z.infer<typeof enrollmentDefaultsSchema>;

/** A protocol's URL segment for this profile (`/acme/profile/{path_id}`, `/scep/{path_id}` …). */
export const pathIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'must be lower-case letters, digits, ".", "_" or "-"');

/** What every protocol block has. */
export const protocolBlockSchema = z.object({
  enabled: z.boolean(),
  /** Null: the protocol addresses the profile by its id. Unique per protocol. */
  path_id: pathIdSchema.nullable(),
});

export const ACME_CHALLENGE_TYPES = ['http-01', 'dns-01', 'tls-alpn-01'] as const;
export const acmeChallengeTypeSchema = z.enum(ACME_CHALLENGE_TYPES);
export type AcmeChallengeType = z.infer<typeof acmeChallengeTypeSchema>;

/**
 * `challenge`: identifiers are proven with http-01, dns-01 or tls-alpn-01. `trust_authenticated`:
 * an account that authenticated (JWS, and EAB when required) is trusted for any identifier:
 * authorizations are valid at once (private PKI behind an authenticating gateway, benchmarks).
 */
export const acmeAuthModeSchema = z.enum(['challenge', 'trust_authenticated']);
export type AcmeAuthMode = z.infer<typeof acmeAuthModeSchema>;

export const acmeSettingsSchema = protocolBlockSchema.extend({
  auth_mode: acmeAuthModeSchema,
  /** New accounts must carry an externalAccountBinding made with one of the profile's EAB keys. */
  eab_required: z.boolean(),
  /** Directory meta.termsOfService; clients show it and send termsOfServiceAgreed. */
  terms_of_service_url: z.string().url().max(2048).nullable(),
  /** Directory meta.website. */
  website_url: z.string().url().max(2048).nullable(),
  /** Challenge types offered for non-wildcard identifiers (wildcards always get dns-01 only). */
  challenge_types: z.array(acmeChallengeTypeSchema).min(1).max(3),
  /**
   * Orders may name `localhost` (and names below it) and loopback addresses. Off by default: no
   * CA should certify a name that means every machine (RFC 6761 §6.3); a test rig turns it on.
   */
  allow_localhost: z.boolean(),
  rate_limits: z.object({
    /** New orders one account may create per hour; null: unlimited. */
    orders_per_account_per_hour: z.number().int().min(1).max(1_000_000).nullable(),
    /** New accounts one client address may create per hour; null: unlimited. */
    accounts_per_ip_per_hour: z.number().int().min(1).max(1_000_000).nullable(),
  }),
});
export type AcmeSettings = z.infer<typeof acmeSettingsSchema>;

/**
 * EST (RFC 7030). Clients authenticate with HTTP Basic (`basic_credentials`, write-only, kept
 * as scrypt hashes), with a TLS client certificate on the mutual-TLS routes (checked against
 * the PEM bundle at `mtls_trust_bundle_path`), and, when `require_channel_binding` is set, with
 * the RFC 9266 `tls-exporter` value in the CSR's challengePassword. docs/protocols/est.md.
 */
export const estSettingsSchema = protocolBlockSchema.extend({
  /** `/serverkeygen` answers; when false it is 404. */
  server_keygen: z.boolean(),
  /** PEM bundle of CA certificates for the `/.well-known/est-mtls/…` routes; null: those routes refuse every client. */
  mtls_trust_bundle_path: z.string().min(1).max(4096).nullable(),
  /** Enrollment over TLS 1.3 must carry the tls-exporter channel binding in challengePassword. */
  require_channel_binding: z.boolean(),
});
export type EstSettings = z.infer<typeof estSettingsSchema>;

/** One HTTP Basic credential as given on input; stored only as an scrypt hash. */
export const estBasicCredentialSchema = z.object({
  // RFC 7617 §2: the user-id cannot contain a colon.
  username: z
    .string()
    .min(1)
    .max(128)
    .refine(
      (v) => ![...v].some((c) => c === ':' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
      'must not contain ":" or control characters',
    ),
  password: z.string().min(12).max(1024),
});
export type EstBasicCredential = z.infer<typeof estBasicCredentialSchema>;

/**
 * Device-management (MDM) signed challenges for SCEP: the challengePassword is a token signed
 * by the MDM's key instead of a shared password. docs/protocols/scep.md.
 */
export const scepMdmSettingsSchema = z.object({
  enabled: z.boolean(),
  /** PEM file of the MDM's signing certificate(s). */
  trust_bundle_path: z.string().min(1).max(4096).nullable(),
  /** Expected `aud` of the signed challenge. */
  audience: z.string().min(1).max(1024).nullable(),
  /** How long after its `iat` a challenge is accepted, whatever its `exp` says (docs/protocols/scep-mdm.md). */
  max_lifetime_seconds: z.number().int().min(60).max(86_400),
  /** The challenge must state that the device is compliant. */
  require_compliance: z.boolean(),
});
export type ScepMdmSettings = z.infer<typeof scepMdmSettingsSchema>;

/**
 * SCEP (RFC 8894). Clients prove themselves with the challengePassword of their CSR: a static
 * password (`challenge_password`, write-only, kept as an scrypt hash) or, with `mdm.enabled`,
 * a challenge signed by the device manager; on the `/scep-mtls/…` routes also with a TLS
 * client certificate chaining to the PEM bundle at `mtls_trust_bundle_path`.
 * docs/protocols/scep.md.
 */
export const scepSettingsSchema = protocolBlockSchema.extend({
  /** PEM bundle of CA certificates for the `/scep-mtls/…` routes; null: those routes refuse every client. */
  mtls_trust_bundle_path: z.string().min(1).max(4096).nullable(),
  mdm: scepMdmSettingsSchema,
});
export type ScepSettings = z.infer<typeof scepSettingsSchema>;

/** The protocols with a block on profiles. */
export const ENROLLMENT_PROTOCOLS = ['acme', 'est', 'scep'] as const;
export type EnrollmentProtocol = (typeof ENROLLMENT_PROTOCOLS)[number];

/**
 * Write-only fields of each block: accepted on input, sealed at rest (SecretBox), never
 * returned; a view shows `<field>_set: boolean` instead. ACME keeps its secrets (EAB keys) in
 * their own records, so it has none here.
 */
export const ENROLLMENT_SECRET_FIELDS: Readonly<Record<EnrollmentProtocol, readonly string[]>> = {
  acme: [],
  // JSON of [{username, password_hash}] (scrypt, see crypto/password-hash.ts).
  est: ['basic_credentials'],
  // scrypt hash of the static SCEP challenge password (see crypto/password-hash.ts).
  scep: ['challenge_password'],
};

/** Secret values by protocol and field, as storage seals them. */
export type EnrollmentSecrets = Partial<Record<string, Record<string, string>>>;

export const DEFAULT_ENROLLMENT_DEFAULTS: Readonly<EnrollmentDefaults> = Object.freeze({
  issuer_id: null,
  owner_id: null,
  team_id: null,
  renewal_policy_id: null,
});

export const DEFAULT_ACME_SETTINGS: Readonly<AcmeSettings> = Object.freeze({
  enabled: false,
  path_id: null,
  auth_mode: 'challenge',
  eab_required: false,
  terms_of_service_url: null,
  website_url: null,
  challenge_types: [...ACME_CHALLENGE_TYPES],
  allow_localhost: false,
  rate_limits: { orders_per_account_per_hour: 300, accounts_per_ip_per_hour: 50 },
});

export const DEFAULT_EST_SETTINGS: Readonly<EstSettings> = Object.freeze({
  enabled: false,
  path_id: null,
  server_keygen: false,
  mtls_trust_bundle_path: null,
  require_channel_binding: false,
});

export const DEFAULT_SCEP_SETTINGS: Readonly<ScepSettings> = Object.freeze({
  enabled: false,
  path_id: null,
  mtls_trust_bundle_path: null,
  mdm: Object.freeze({
    enabled: false,
    trust_bundle_path: null,
    audience: null,
    max_lifetime_seconds: 3600,
    require_compliance: true,
  }),
});

/** The enrollment part of a profile record. */
export interface ProfileEnrollment {
  enrollment: EnrollmentDefaults;
  acme: AcmeSettings;
  est: EstSettings;
  scep: ScepSettings;
  /** Names of the secret fields that hold a value, by protocol (never the values). */
  enrollment_secrets_set: Partial<Record<EnrollmentProtocol, string[]>>;
}
