import type { ColumnType } from 'kysely';

/**
 * Row shapes as stored. JSON lives in text columns (same on every engine); booleans may come
 * back as 0/1 from MySQL and counts as strings from pg, so mappers normalize them.
 */
type Ts = Date;
type Bool = boolean | number;

export interface OwnersTable {
  id: string;
  name: string;
  email: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface TeamsTable {
  id: string;
  name: string;
  description: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface IssuersTable {
  id: string;
  name: string;
  type: string;
  enabled: Bool;
  config_sealed: string;
  created_at: Ts;
  updated_at: Ts;
}

export interface ProfilesTable {
  id: string;
  name: string;
  description: string | null;
  allowed_key_algorithms: string;
  allowed_ekus: string;
  required_csr_attributes: string;
  must_staple: Bool;
  allow_ip_sans: Bool;
  short_lived_validity_hours: number | null;
  max_validity_days: number;
  key_generation: string;
  enrollment_settings: string | null;
  enrollment_secrets_sealed: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface EnrollmentPathsTable {
  protocol: string;
  path_id: string;
  profile_id: string;
}

export interface AcmeEabKeysTable {
  id: string;
  profile_id: string;
  name: string;
  hmac_key_sealed: string;
  account_id: string | null;
  bound_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface AcmeAccountsTable {
  id: string;
  profile_id: string;
  status: string;
  jwk: string;
  jwk_thumbprint: string;
  contact: string;
  terms_agreed: Bool;
  eab_key_id: string | null;
  created_ip: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface AcmeOrdersTable {
  id: string;
  account_id: string;
  profile_id: string;
  status: string;
  identifiers: string;
  not_before: Ts | null;
  not_after: Ts | null;
  expires: Ts;
  error: string | null;
  acme_profile: string | null;
  replaces: string | null;
  certificate_id: string | null;
  job_id: string | null;
  version_id: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface AcmeAuthorizationsTable {
  id: string;
  order_id: string;
  account_id: string;
  identifier_type: string;
  identifier_value: string;
  wildcard: Bool;
  status: string;
  expires: Ts;
  created_at: Ts;
  updated_at: Ts;
}

export interface AcmeChallengesTable {
  id: string;
  authorization_id: string;
  type: string;
  token: string;
  status: string;
  validated_at: Ts | null;
  error: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface RenewalPoliciesTable {
  id: string;
  name: string;
  renewal_window_days: number;
  max_retries: number | null;
  retry_interval_seconds: number;
  alert_thresholds_days: string;
  created_at: Ts;
  updated_at: Ts;
}

export interface PolicyRulesTable {
  id: string;
  name: string;
  type: string;
  severity: string;
  config: string | null;
  enabled: Bool;
  description: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface PolicyViolationsTable {
  id: string;
  rule_id: string;
  rule_type: string;
  certificate_id: string;
  severity: string;
  message: string;
  detected_at: Ts;
}

export interface CertificatesTable {
  id: string;
  name: string;
  common_name: string;
  sans: string;
  status: string;
  source: string;
  issuer_id: string;
  owner_id: string;
  team_id: string;
  renewal_policy_id: string;
  profile_id: string | null;
  environment: string | null;
  metadata: string;
  tags: string;
  /** Lower-cased name, common name and SANs, one per line: the free-text search column. */
  search_text: string;
  current_version_id: string | null;
  expires_at: Ts | null;
  last_renewal_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface CertificateVersionsTable {
  id: string;
  certificate_id: string;
  issuer_id: string;
  serial_number: string;
  fingerprint_sha256: string;
  key_algorithm: string;
  key_size: number;
  subject: string;
  issued_at: Ts;
  not_before: Ts;
  not_after: Ts;
  csr_pem: string | null;
  cert_pem: string;
  chain_pem: string;
  private_key_sealed: string | null;
  revoked_at: Ts | null;
  revocation_reason: string | null;
  invalidity_date: Ts | null;
  /** DER of the version's CRL entry once revoked and met by a CRL build (migration 0018). */
  crl_entry: Uint8Array | null;
  created_at: Ts;
}

export interface CertificateTargetsTable {
  certificate_id: string;
  target_id: string;
  created_at: Ts;
}

export interface AgentsTable {
  id: string;
  name: string;
  hostname: string;
  status: string;
  last_heartbeat_at: Ts | null;
  registered_at: Ts;
  os: string;
  architecture: string;
  ip_address: string;
  version: string;
  api_key_hash: string | null;
  retired_at: Ts | null;
  retired_reason: string | null;
  updated_at: Ts;
}

export interface TargetsTable {
  id: string;
  agent_id: string;
  name: string;
  type: string;
  enabled: Bool;
  config_sealed: string;
  retired_at: Ts | null;
  retired_reason: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface JobsTable {
  id: string;
  type: string;
  status: string;
  certificate_id: string | null;
  target_id: string | null;
  agent_id: string | null;
  payload: string;
  result: string | null;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  csr_pem: string | null;
  scheduled_at: Ts;
  started_at: Ts | null;
  completed_at: Ts | null;
  locked_by: string | null;
  lease_expires_at: Ts | null;
  verification_status: string | null;
  verification_detail: string | null;
  verified_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface NotificationsTable {
  id: string;
  type: string;
  channel: string;
  recipient: string;
  subject: string;
  message: string;
  certificate_id: string | null;
  status: string;
  retry_count: number;
  next_retry_at: Ts | null;
  last_error: string | null;
  sent_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
  /** Until when a delivery attempt holds the event (migration 0019); null when none does. */
  claimed_until: Ts | null;
}

export interface WebhooksTable {
  id: string;
  name: string;
  /** What may be shown of the URL (maskWebhookUrl); the URL itself is in url_sealed. */
  url: string;
  method: string;
  service: string;
  enabled: Bool;
  template: string;
  header_names: string;
  headers_sealed: string;
  /** The URL sealed under the service key (migration 28); null only until the start that applied it sealed the row. */
  url_sealed: string | null;
  /** JSON list of notification types; `[]` = every type. */
  events: string;
  /** JSON object of per-kind settings. */
  options: string;
  created_at: Ts;
  updated_at: Ts;
}

export interface ScepProbesTable {
  id: string;
  url: string;
  reachable: Bool;
  /** JSON array of GetCACaps keywords. */
  capabilities: string;
  supports_rfc8894: Bool;
  supports_aes: Bool;
  supports_post: Bool;
  supports_renewal: Bool;
  supports_sha256: Bool;
  supports_sha512: Bool;
  ca_subject: string | null;
  ca_issuer: string | null;
  ca_not_before: Ts | null;
  ca_not_after: Ts | null;
  key_algorithm: string | null;
  chain_length: number;
  probed_at: Ts;
  duration_ms: number;
  error: string | null;
}

export interface SystemSettingsTable {
  name: string;
  value: string;
  updated_at: Ts;
}

export interface AuditEventsTable {
  id: string;
  seq: number | string;
  actor: string;
  actor_type: string;
  action: string;
  resource_type: string;
  resource_id: string;
  category: string;
  details: string;
  occurred_at: Ts;
  prev_hash: string;
  hash: string;
}

/** One row (id = 1): the chain head, locked by every append so appends serialize. */
export interface AuditHeadTable {
  id: number;
  last_seq: number | string;
  last_hash: string;
  /** First keyed seq; earlier events carry unkeyed legacy hashes (migration 6). */
  keyed_from_seq: number | string;
  /** HMAC of the head under the chain key; null only until the start that applied migration 6 sealed it. */
  head_mac: string | null;
}

export interface QueueJobsTable {
  id: string;
  topic: string;
  payload: string;
  state: string;
  attempts: number;
  max_attempts: number;
  run_at: Ts;
  dedupe_key: string | null;
  /** Topic and dedupe_key while pending or running, else null: "unique while active". */
  dedupe_active: string | null;
  last_error: string | null;
  lease_id: string | null;
  lease_expires_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: Ts;
}

/** One sealed row that proves the encryption key at start-up (migration 0004). */
export interface KeyCheckTable {
  id: string;
  sealed: string;
  created_at: Ts;
}

/** The keyring's state by name (migration 0034): see keyring.ts. */
export interface KeyringTable {
  name: string;
  value: string;
  updated_at: Ts;
}

/** The SCEP RA of a profile (migration 0010). */
export interface ScepRaCertificatesTable {
  profile_id: string;
  issuer_id: string;
  certificate_pem: string;
  fingerprint_sha256: string;
  private_key_sealed: string;
  not_before: Ts;
  not_after: Ts;
  previous_certificate_pem: string | null;
  previous_private_key_sealed: string | null;
  updated_at: Ts;
}

export interface ScanTargetsTable {
  id: string;
  name: string;
  cidrs: string;
  hosts: string;
  ports: string;
  sni_names: string;
  interval_seconds: number;
  enabled: Bool;
  last_scan_at: Ts | null;
  next_scan_at: Ts | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface DiscoveryScansTable {
  id: string;
  target_id: string | null;
  source: string;
  status: string;
  started_at: Ts;
  finished_at: Ts | null;
  endpoints_total: number;
  endpoints_tls: number;
  certificates_found: number;
  certificates_new: number;
  errors_count: number;
  errors: string;
  created_at: Ts;
  updated_at: Ts;
}

export interface DiscoveredCertificatesTable {
  id: string;
  fingerprint_sha256: string;
  subject: string;
  issuer: string;
  serial_number: string;
  sans: string;
  not_before: Ts;
  not_after: Ts;
  key_algorithm: string;
  key_size: number;
  signature_algorithm: string;
  self_signed: Bool;
  cert_pem: string;
  chain_pem: string;
  status: string;
  certificate_id: string | null;
  first_seen_at: Ts;
  last_seen_at: Ts;
  created_at: Ts;
  updated_at: Ts;
}

export interface DiscoverySightingsTable {
  discovered_id: string;
  location_key: string;
  source: string;
  scan_id: string | null;
  address: string | null;
  port: number | null;
  sni: string | null;
  path: string | null;
  first_seen_at: Ts;
  last_seen_at: Ts;
}

export interface HealthChecksTable {
  id: string;
  name: string;
  host: string;
  port: number;
  sni: string | null;
  expected_fingerprint: string | null;
  certificate_id: string | null;
  interval_seconds: number;
  deployment_window_seconds: number;
  enabled: Bool;
  status: string;
  consecutive_failures: number;
  last_checked_at: Ts | null;
  next_check_at: Ts | null;
  last_success_at: Ts | null;
  last_failure_at: Ts | null;
  last_error: string | null;
  status_changed_at: Ts;
  observed: string | null;
  handshake_ms: number | null;
  tls_version: string | null;
  cipher: string | null;
  acknowledged_at: Ts | null;
  acknowledged_by: string | null;
  created_at: Ts;
  updated_at: Ts;
}

export interface AuthUsersTable {
  id: string;
  tenant_id: string;
  subject: string;
  provider_key: string;
  email: string | null;
  display_name: string | null;
  created_at: Ts;
  last_login_at: Ts | null;
  deactivated_at: Ts | null;
}

export interface AuthRolesTable {
  tenant_id: string;
  name: string;
  description: string;
  permissions: string;
  created_at: Ts;
  updated_at: Ts;
}

export interface HealthCheckResultsTable {
  id: string;
  check_id: string;
  checked_at: Ts;
  status: string;
  success: Bool;
  fingerprint_sha256: string | null;
  tls_version: string | null;
  cipher: string | null;
  handshake_ms: number | null;
  error: string | null;
}

export interface AuthUserRolesTable {
  user_id: string;
  role: string;
}

export interface AuthSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  tenant_id: string;
  auth_method: string;
  provider_id: string | null;
  oidc_sid: string | null;
  groups: string;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Ts;
  last_seen_at: Ts;
  expires_at: Ts;
  idle_expires_at: Ts;
}

export interface AuthOidcGroupMappingsTable {
  id: string;
  tenant_id: string;
  provider_id: string;
  group_name: string;
  role: string;
  created_at: Ts;
}

export interface AuthOidcProvidersTable {
  id: string;
  tenant_id: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string | null;
  scopes: string;
  groups_claim: string;
  email_claim: string;
  name_claim: string;
  redirect_uri: string;
  post_login_url: string;
  enabled: Bool;
  created_at: Ts;
  updated_at: Ts;
}

export interface AuthBreakglassCredentialsTable {
  actor_id: string;
  user_id: string;
  password_hash: string;
  created_at: Ts;
  updated_at: Ts;
  last_used_at: Ts | null;
  /** Failed passwords of the current run (migration 22); defaults to 0. */
  failed_attempts: ColumnType<number, number | undefined, number>;
  /** When the current run of failures began. */
  failures_since: ColumnType<Ts | null, Ts | null | undefined, Ts | null>;
  /** Locked out until then. */
  locked_until: ColumnType<Ts | null, Ts | null | undefined, Ts | null>;
}

export interface Database {
  scan_targets: ScanTargetsTable;
  discovery_scans: DiscoveryScansTable;
  discovered_certificates: DiscoveredCertificatesTable;
  discovery_sightings: DiscoverySightingsTable;
  health_checks: HealthChecksTable;
  health_check_results: HealthCheckResultsTable;
  auth_breakglass_credentials: AuthBreakglassCredentialsTable;
  auth_oidc_providers: AuthOidcProvidersTable;
  auth_users: AuthUsersTable;
  auth_roles: AuthRolesTable;
  auth_user_roles: AuthUserRolesTable;
  auth_sessions: AuthSessionsTable;
  auth_oidc_group_mappings: AuthOidcGroupMappingsTable;
  owners: OwnersTable;
  teams: TeamsTable;
  issuers: IssuersTable;
  certificate_profiles: ProfilesTable;
  enrollment_paths: EnrollmentPathsTable;
  acme_eab_keys: AcmeEabKeysTable;
  acme_accounts: AcmeAccountsTable;
  acme_orders: AcmeOrdersTable;
  acme_authorizations: AcmeAuthorizationsTable;
  acme_challenges: AcmeChallengesTable;
  scep_ra_certificates: ScepRaCertificatesTable;
  renewal_policies: RenewalPoliciesTable;
  policy_rules: PolicyRulesTable;
  policy_violations: PolicyViolationsTable;
  certificates: CertificatesTable;
  certificate_versions: CertificateVersionsTable;
  certificate_targets: CertificateTargetsTable;
  agents: AgentsTable;
  deployment_targets: TargetsTable;
  jobs: JobsTable;
  notification_events: NotificationsTable;
  webhooks: WebhooksTable;
  scep_probes: ScepProbesTable;
  system_settings: SystemSettingsTable;
  audit_events: AuditEventsTable;
  audit_head: AuditHeadTable;
  queue_jobs: QueueJobsTable;
  cw_schema_migrations: SchemaMigrationsTable;
  cw_key_check: KeyCheckTable;
  cw_keyring: KeyringTable;
}

/** The two SQL families this package speaks; PGlite is 'postgres'. */
export type Flavor = 'postgres' | 'mysql';
