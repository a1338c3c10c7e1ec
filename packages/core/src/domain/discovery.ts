import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

/** A network range and port list the server scanner walks (docs/api/discovery.md). */
export const scanTargetSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  /** CIDR ranges or single addresses, canonical text. */
  cidrs: z.array(z.string()),
  /** DNS names, resolved at scan time. */
  hosts: z.array(z.string()),
  ports: z.array(z.number().int().min(1).max(65535)),
  /** Names sent as SNI to every address, in addition to a handshake without SNI. */
  sni_names: z.array(z.string()),
  /** Seconds between scheduled scans; 0 runs only on demand. */
  interval_seconds: z.number().int().min(0),
  enabled: z.boolean(),
  last_scan_at: timestampSchema.nullable(),
  next_scan_at: timestampSchema.nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type ScanTarget = z.infer<typeof scanTargetSchema>;

export const DISCOVERY_SCAN_STATUSES = ['running', 'completed', 'failed'] as const;
export type DiscoveryScanStatus = (typeof DISCOVERY_SCAN_STATUSES)[number];

export const scanErrorSchema = z.object({
  address: z.string(),
  port: z.number().int(),
  sni: z.string().nullable(),
  reason: z.string(),
  message: z.string(),
});
export type ScanError = z.infer<typeof scanErrorSchema>;

/** One run of a discovery source: the server scanner over a target, or an agent's report. */
export const discoveryScanSchema = z.object({
  id: idSchema,
  target_id: idSchema.nullable(),
  /** The reporting agent: `server-scanner` for network scans, an agent id for host reports. */
  source: z.string(),
  status: z.enum(DISCOVERY_SCAN_STATUSES),
  started_at: timestampSchema,
  finished_at: timestampSchema.nullable(),
  /** Address/port/SNI combinations tried (network) or paths reported (host). */
  endpoints_total: z.number().int().min(0),
  /** Endpoints that completed a TLS handshake (network) or yielded a certificate (host). */
  endpoints_tls: z.number().int().min(0),
  certificates_found: z.number().int().min(0),
  /** Distinct fingerprints never seen before this run. */
  certificates_new: z.number().int().min(0),
  errors_count: z.number().int().min(0),
  /** The first errors (at most 100), so a run with a million closed ports stays small. */
  errors: z.array(scanErrorSchema),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type DiscoveryScan = z.infer<typeof discoveryScanSchema>;

export const DISCOVERED_STATUSES = ['unmanaged', 'managed', 'dismissed'] as const;
export const discoveredStatusSchema = z.enum(DISCOVERED_STATUSES);
export type DiscoveredStatus = z.infer<typeof discoveredStatusSchema>;

/** Where a certificate was seen: an address/port (with SNI) or a file path on an agent's host. */
export const sightingSchema = z.object({
  source: z.string(),
  scan_id: idSchema.nullable(),
  address: z.string().nullable(),
  port: z.number().int().nullable(),
  sni: z.string().nullable(),
  path: z.string().nullable(),
  first_seen_at: timestampSchema,
  last_seen_at: timestampSchema,
});
export type Sighting = z.infer<typeof sightingSchema>;

/** A certificate found by any source, one record per SHA-256 fingerprint. */
export const discoveredCertificateSchema = z.object({
  id: idSchema,
  fingerprint_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  subject: z.string(),
  issuer: z.string(),
  serial_number: z.string(),
  sans: z.array(z.string()),
  not_before: timestampSchema,
  not_after: timestampSchema,
  key_algorithm: z.string(),
  key_size: z.number().int().min(0),
  signature_algorithm: z.string(),
  self_signed: z.boolean(),
  /** The leaf and the chain the endpoint served after it, PEM. */
  cert_pem: z.string(),
  chain_pem: z.string(),
  status: discoveredStatusSchema,
  /** The managed certificate it belongs to, once claimed or recognised. */
  certificate_id: idSchema.nullable(),
  first_seen_at: timestampSchema,
  last_seen_at: timestampSchema,
  sightings: z.array(sightingSchema),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type DiscoveredCertificate = z.infer<typeof discoveredCertificateSchema>;

export const HEALTH_STATUSES = ['healthy', 'degraded', 'down', 'cert_mismatch'] as const;
export const healthStatusSchema = z.enum(HEALTH_STATUSES);
export type HealthStatus = z.infer<typeof healthStatusSchema>;

/** What one handshake showed. */
export const observedCertificateSchema = z.object({
  fingerprint_sha256: z.string(),
  subject: z.string(),
  issuer: z.string(),
  serial_number: z.string(),
  not_after: timestampSchema,
});
export type ObservedCertificate = z.infer<typeof observedCertificateSchema>;

/** A TLS endpoint watched by the health monitor (docs/api/discovery.md). */
export const healthCheckSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  host: z.string(),
  port: z.number().int().min(1).max(65535),
  sni: z.string().nullable(),
  /** The fingerprint the endpoint must serve; derived from `certificate_id` when that is set. */
  expected_fingerprint: z.string().nullable(),
  certificate_id: idSchema.nullable(),
  interval_seconds: z.number().int().min(30),
  /** How long after a renewal an endpoint may still serve the previous version. */
  deployment_window_seconds: z.number().int().min(0),
  enabled: z.boolean(),
  status: healthStatusSchema,
  consecutive_failures: z.number().int().min(0),
  last_checked_at: timestampSchema.nullable(),
  next_check_at: timestampSchema.nullable(),
  last_success_at: timestampSchema.nullable(),
  last_failure_at: timestampSchema.nullable(),
  last_error: z.string().nullable(),
  status_changed_at: timestampSchema,
  observed: observedCertificateSchema.nullable(),
  handshake_ms: z.number().nullable(),
  tls_version: z.string().nullable(),
  cipher: z.string().nullable(),
  acknowledged_at: timestampSchema.nullable(),
  acknowledged_by: z.string().nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type HealthCheck = z.infer<typeof healthCheckSchema>;

/** One check's outcome, kept for the history. */
export const healthCheckResultSchema = z.object({
  id: idSchema,
  check_id: idSchema,
  checked_at: timestampSchema,
  /** The check's status after this result. */
  status: healthStatusSchema,
  success: z.boolean(),
  fingerprint_sha256: z.string().nullable(),
  tls_version: z.string().nullable(),
  cipher: z.string().nullable(),
  handshake_ms: z.number().nullable(),
  error: z.string().nullable(),
});
export type HealthCheckResult = z.infer<typeof healthCheckResultSchema>;
