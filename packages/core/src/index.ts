/**
 * `@certwright/core`: the front door of the domain library. Every name is listed here on purpose,
 * grouped by the file that defines it, so a reader finds a name's home in one hop and nothing
 * becomes public by being exported from an inner file. PKI, the outbound client, the Node bridge
 * and the contract suites have their own subpaths (`./pki`, `./net`, `./node`, `./testing`).
 * `src/index.test.ts` keeps the runtime names in a list: adding one is a decision a diff shows.
 */
export { verifyPassword } from './crypto/password-hash.js';
export { SecretBox } from './crypto/secret-box.js';
export { describeChain, fingerprintOf } from './discovery/observe.js';
export {
  DEFAULT_SCAN_CONCURRENCY,
  DEFAULT_SCAN_TIMEOUT_MS,
  planScan,
  type ScanEndpoint,
  scanEndpoints,
} from './discovery/scanner.js';
export {
  ACME_ACCOUNT_STATUSES,
  type AcmeAccount,
  type AcmeAuthorization,
  type AcmeAuthorizationStatus,
  type AcmeChallenge,
  type AcmeEabKey,
  type AcmeIdentifier,
  type AcmeOrder,
  type AcmeOrderStatus,
  type AcmeProblem,
  acmeIdentifierSchema,
  type PublicJwk,
} from './domain/acme.js';
export {
  type Agent,
  type AgentStatus,
  agentSchema,
  isSentinelAgentId,
  SENTINEL_AGENT_IDS,
} from './domain/agent.js';
export {
  type ActorType,
  AUDIT_GENESIS_HASH,
  type AuditCategory,
  AuditChainKey,
  type AuditEvent,
  type AuditHead,
  auditCategorySchema,
  auditEventSchema,
  auditHeadMessage,
  computeAuditHash,
  computeAuditHeadMac,
  legacyAuditHash,
  type NewAuditEvent,
  verifyAuditChain,
} from './domain/audit.js';
export {
  CERTIFICATE_SOURCES,
  CERTIFICATE_STATUSES,
  type CertificateSource,
  type CertificateStatus,
  type CertificateVersion,
  type ManagedCertificate,
  REVOCATION_REASONS,
  type RevocationReason,
} from './domain/certificate.js';
export {
  DEFAULT_PER_PAGE,
  idSchema,
  MAX_PER_PAGE,
  newId,
  type PageRequest,
  type PageResult,
  slugify,
} from './domain/common.js';
export {
  DISCOVERED_STATUSES,
  type DiscoveredCertificate,
  type DiscoveredStatus,
  type DiscoveryScan,
  discoveredCertificateSchema,
  discoveryScanSchema,
  HEALTH_STATUSES,
  type HealthCheck,
  type HealthCheckResult,
  type HealthStatus,
  healthCheckResultSchema,
  healthCheckSchema,
  type ObservedCertificate,
  type ScanError,
  type ScanTarget,
  type Sighting,
  scanTargetSchema,
} from './domain/discovery.js';
export {
  ISSUER_TYPES,
  type Issuer,
  type IssuerConfig,
  type IssuerType,
  type IssuerWithConfig,
} from './domain/issuer.js';
export {
  JOB_STATUSES,
  type Job,
  type JobStatus,
  type JobType,
  jobSchema,
  OPEN_JOB_STATUSES,
  type VerificationStatus,
  verificationStatusSchema,
} from './domain/job.js';
export type { NamedKind } from './domain/names.js';
export {
  NOTIFICATION_STATUSES,
  type NotificationEvent,
  type NotificationStatus,
  type NotificationType,
  notificationEventSchema,
} from './domain/notification.js';
export type { Owner } from './domain/owner.js';
export {
  type AuthUser,
  type BreakglassCredential,
  DEFAULT_TENANT_ID,
  type OidcGroupMapping,
  type OidcProvider,
  type Role,
  type Session,
} from './domain/people.js';
export {
  BUILT_IN_ROLES,
  isPermission,
  PERMISSION_NAMES,
  PERMISSIONS,
  type Permission,
  permissionsOf,
} from './domain/permissions.js';
export {
  POLICY_RULE_TYPES,
  type PolicyRule,
  type PolicyRuleType,
  type PolicyViolation,
  SEVERITIES,
  type Severity,
} from './domain/policy.js';
export {
  type AcmeChallengeType,
  type AcmeSettings,
  acmeSettingsSchema,
  allowedKeyAlgorithmSchema,
  type CertificateProfile,
  DEFAULT_ACME_SETTINGS,
  DEFAULT_ENROLLMENT_DEFAULTS,
  DEFAULT_EST_SETTINGS,
  DEFAULT_SCEP_SETTINGS,
  ENROLLMENT_PROTOCOLS,
  ENROLLMENT_SECRET_FIELDS,
  type EnrollmentDefaults,
  type EnrollmentProtocol,
  type EnrollmentSecrets,
  type EstSettings,
  EXTENDED_KEY_USAGES,
  enrollmentDefaultsSchema,
  estSettingsSchema,
  type ProfileEnrollment,
  type ScepSettings,
  scepSettingsSchema,
} from './domain/profile.js';
export {
  DEFAULT_RENEWAL_POLICY_ID,
  RENEWAL_POLICY_LIMITS,
  type RenewalPolicy,
} from './domain/renewal-policy.js';
export type { ScepProbe } from './domain/scep-probe.js';
export {
  type DeploymentTarget,
  type DeploymentTargetWithConfig,
  deploymentTargetSchema,
  type TargetConfig,
  type TargetType,
  type TargetView,
  targetViewSchema,
} from './domain/target.js';
export type { Team } from './domain/team.js';
export {
  maskWebhookUrl,
  type Webhook,
  type WebhookHeaders,
  type WebhookWithHeaders,
} from './domain/webhook.js';
export { MemoryEphemeralStore } from './ephemeral/memory-ephemeral-store.js';
export {
  CertwrightError,
  DEFAULT_REASONS,
  type ErrorCode,
  type FailureReason,
  type FieldIssue,
  fail,
  INTERNAL_ERROR_MESSAGE,
  isCertwrightError,
  notFound,
  publicMessage,
  REASON_CODES,
  validationError,
} from './errors.js';
export type { AcmeConnectorDeps } from './issuers/acme/connector.js';
export { ephemeralHttp01Store, type Http01Store } from './issuers/acme/http01.js';
export { type IssueRequest, type IssuerConnector, IssuerConnectorRegistry } from './issuers/connector.js';
export { defaultIssuerConnectors } from './issuers/index.js';
export { createLocalCaConnector } from './issuers/local-ca.js';
export { assertMechanismFits, keyAlgorithmOfSpki, mechanismHash } from './key-custody/mechanisms.js';
export { checkLabel, SoftwareKeyCustody } from './key-custody/software.js';
export { type NotificationChannel, NotificationChannelRegistry } from './notify/channel.js';
export { type DeliveryJob, NOTIFICATION_DELIVERY_TOPIC } from './notify/immediate-delivery.js';
export { parseTemplate, parseUrlTemplate, renderTemplate } from './notify/template/template.js';
export { sampleAlert } from './notify/webhooks/alert.js';
export { WebhookSender } from './notify/webhooks/sender.js';
export type {
  AcmeAccountRepository,
  AcmeAuthorizationRepository,
  AcmeAuthorizationWithChallenges,
  AcmeChallengeRepository,
  AcmeEabKeyRepository,
  AcmeOrderRepository,
  AcmeStorage,
  NewAcmeAuthorization,
} from './ports/acme-storage.js';
export { type AttemptFailure, logAttemptFailure, summaryOf } from './ports/attempt-log.js';
export { type Clock, ManualClock, systemClock } from './ports/clock.js';
export type { CrlPublication, CrlPublisher } from './ports/crl-publisher.js';
export type {
  DiscoveredCertificateFilter,
  DiscoveredCertificateRepository,
  DiscoveryScanRepository,
  HealthCheckRepository,
  ScanTargetRepository,
  SightingInput,
} from './ports/discovery-storage.js';
export {
  assertCounterStep,
  assertPositiveMs,
  type EphemeralStore,
  type SlidingWindowResult,
} from './ports/ephemeral.js';
export type { CreateCustodyKey, CustodyKeyInfo, KeyCustody } from './ports/key-custody.js';
export { type Logger, silentLogger } from './ports/logger.js';
export type {
  AuthUserRepository,
  BreakglassCredentialRepository,
  OidcGroupMappingRepository,
  OidcProviderRepository,
  PeopleStorage,
  RoleRepository,
  SessionRepository,
} from './ports/people-storage.js';
export {
  assertEnqueueOptions,
  type ClaimedJob,
  type ClaimOptions,
  DEFAULT_MAX_ATTEMPTS,
  type EnqueueOptions,
  type FailOutcome,
  type JobContext,
  type JobHandler,
  type ListDeadOptions,
  type Queue,
  type QueueJob,
  type QueueJobState,
  type QueueWorker,
  runQueueWorker,
  type WorkOptions,
} from './ports/queue.js';
export type { ScepRaRecord, ScepRaRepository, ScepStorage } from './ports/scep-storage.js';
export type {
  AgentRepository,
  AuditRepository,
  CertificateFilter,
  CertificateListKey,
  CertificateListQuery,
  CertificatePatch,
  CertificateRepository,
  CertificateVersionRepository,
  IssuerRepository,
  JobRepository,
  NameRepository,
  NewAgent,
  NewCertificate,
  NewCertificateVersion,
  NewJob,
  NotificationRepository,
  OwnerRepository,
  PolicyRuleRepository,
  ProfileRepository,
  RenewalPolicyRepository,
  Revocation,
  RevokedEntry,
  ScepProbeRepository,
  SettingsRepository,
  Storage,
  TargetRepository,
  TeamRepository,
  ViolationRepository,
  WebhookRepository,
} from './ports/storage.js';
export { CREDENTIAL_QUERY_PARAMETERS, redactUrl } from './redact-url.js';
export {
  agentHeartbeatSchema,
  agentListSchema,
  agentRegistrationSchema,
  agentRetireSchema,
} from './services/agents.js';
export { type AuditService, configEvent } from './services/audit.js';
export { bulkReassignSchema, bulkRenewSchema, bulkRevokeSchema } from './services/bulk.js';
export { namesToSign, sanKey } from './services/certificate-names.js';
export {
  certificateCreateSchema,
  certificateListSchema,
  certificateUpdateSchema,
  revokeSchema,
  versionListSchema,
} from './services/certificates.js';
export { type Actor, type ServiceDeps, SYSTEM_ACTOR } from './services/context.js';
export { RevocationStatusService } from './services/crl-ocsp.js';
export { DirectoryCrlPublisher } from './services/crl-publishing/directory.js';
export type {
  CrlPublicationOptions,
  CrlPublications,
  IssuerPublicationStatus,
  PublicationOutcome,
} from './services/crl-publishing/publications.js';
export {
  claimSchema,
  discoveredListSchema,
  discoveryScanListSchema,
  hostReportSchema,
  scanTargetCreateSchema,
  scanTargetListSchema,
  scanTargetUpdateSchema,
} from './services/discovery.js';
export {
  type HealthTickReport,
  healthCheckCreateSchema,
  healthCheckListSchema,
  healthCheckUpdateSchema,
} from './services/health-checks.js';
export { createServices, type ServiceOptions, type Services } from './services/index.js';
export { invalidReference, parseInput } from './services/input.js';
export { IssuerConnectorCache } from './services/issuance/connector-cache.js';
export { EnrollmentService } from './services/issuance/enrollment.js';
export type { IssueOutcome } from './services/issuance/lifecycle.js';
export { checkNamesAgainstProfile } from './services/issuance/profile-rules.js';
export { exportFormatSchema, issueRequestSchema, pkcs12ExportSchema } from './services/issuance/schemas.js';
export {
  type IssuerCreated,
  issuerCreateSchema,
  issuerListSchema,
  issuerUpdateSchema,
} from './services/issuers.js';
export { agentCsrSchema, agentJobReportSchema, JOB_TIMEOUT_REASONS, jobListSchema } from './services/jobs.js';
export { type NamesQuery, namesQuerySchema, type ResolvedNames } from './services/names.js';
export {
  NOTIFICATION_CLAIM_LEASE_MS,
  notificationCreateSchema,
  notificationListSchema,
} from './services/notifications.js';
export type { LifecycleOutcome } from './services/outcomes.js';
export { ownerCreateSchema, ownerListSchema, ownerUpdateSchema } from './services/owners.js';
export { type Paged, paged, pageQuerySchema, storagePage } from './services/paging.js';
export { type UserCreate, userCreateSchema } from './services/people.js';
export type { PkiOptions } from './services/pki.js';
export {
  policyRuleCreateSchema,
  policyRuleListSchema,
  policyRuleUpdateSchema,
  violationListSchema,
} from './services/policies.js';
export { profileCreateSchema, profileListSchema, profileUpdateSchema } from './services/profiles.js';
export { protocolProfile } from './services/protocol-profile.js';
export {
  renewalPolicyCreateSchema,
  renewalPolicyListSchema,
  renewalPolicyUpdateSchema,
} from './services/renewal-policies.js';
export { RevisionedCache } from './services/revisioned-cache.js';
export type { RevocationEvent, RevocationService } from './services/revocation.js';
export {
  ScepProbeService,
  scepProbeHistorySchema,
  scepProbeInputSchema,
} from './services/scep-probe/service.js';
export { targetCreateSchema, targetListSchema, targetUpdateSchema } from './services/targets.js';
export { teamCreateSchema, teamListSchema, teamUpdateSchema } from './services/teams.js';
export {
  webhookCreateSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookRedeliverResultSchema,
  webhookSecuritySchema,
  webhookTestResultSchema,
  webhookTestSchema,
  webhookUpdateSchema,
  webhookViewSchema,
} from './services/webhooks.js';
export {
  type DirectPath,
  type Handler,
  type PlainResponse,
  pathnameOf,
  type RequestHead,
  type TransportContext,
} from './transport.js';
export { readBodyBytes } from './web/body.js';
export { withFixedLength } from './web/fixed-length.js';
