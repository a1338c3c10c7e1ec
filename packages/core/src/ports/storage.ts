import type { Agent, AgentDependencyCounts, AgentStatus } from '../domain/agent.js';
import type {
  AuditAnchor,
  AuditCategory,
  AuditEvent,
  AuditHead,
  AuditVerification,
  NewAuditEvent,
} from '../domain/audit.js';
import type {
  CertificateSortField,
  CertificateSource,
  CertificateStatus,
  CertificateVersion,
  CertificateVersionWithKey,
  ManagedCertificate,
  RevocationReason,
} from '../domain/certificate.js';
import type { PageRequest, PageResult, SortDirection } from '../domain/common.js';
import type { Issuer, IssuerConfig, IssuerType, IssuerWithConfig } from '../domain/issuer.js';
import type { Job, JobStatus, JobType } from '../domain/job.js';
import type { NamedKind } from '../domain/names.js';
import type { NotificationEvent, NotificationStatus, NotificationType } from '../domain/notification.js';
import type { Owner } from '../domain/owner.js';
import type { PolicyRule, PolicyRuleType, PolicyViolation, Severity } from '../domain/policy.js';
import type { CertificateProfile, EnrollmentProtocol, EnrollmentSecrets } from '../domain/profile.js';
import type { RenewalPolicy } from '../domain/renewal-policy.js';
import type { ScepProbe } from '../domain/scep-probe.js';
import type {
  DeploymentTarget,
  DeploymentTargetWithConfig,
  TargetConfig,
  TargetType,
} from '../domain/target.js';
import type { Team } from '../domain/team.js';
import type { Webhook, WebhookHeaders, WebhookWithHeaders } from '../domain/webhook.js';
import type { AcmeStorage } from './acme-storage.js';
import type { DiscoveryStorage } from './discovery-storage.js';
import type { PeopleStorage } from './people-storage.js';
import type { ScepStorage } from './scep-storage.js';

/*
 * The storage port. Every method either succeeds or throws a CertwrightError whose code is one
 * of:
 *   not_found          the addressed record does not exist (update, delete, require …)
 *   conflict           a unique value is taken, or a delete hits a record still referenced
 *   invalid_reference  a create/update names a record that does not exist
 *   unavailable        the database cannot be reached; retrying later may succeed
 * Driver errors never escape. Ids are generated when a create input leaves them out;
 * timestamps default to the storage's clock.
 *
 * Isolation: each statement sees the data committed before it started (PostgreSQL's READ
 * COMMITTED; MySQL/MariaDB run REPEATABLE READ, whose plain reads come from a snapshot taken at
 * the transaction's first plain read). A read-modify-write that must not race another writer
 * takes the row's lock first with `lockForUpdate` ({@link Lockable}) and decides on what it
 * returns. PGlite is one database session: its transactions run one after another, never
 * interleaved, so a lock there never waits for anybody (nobody else can run meanwhile).
 */

/** Creates accept an optional id and timestamps; everything else as in the record. */
type NewRecord<T, Defaults extends keyof T = never> = Omit<
  T,
  'id' | 'created_at' | 'updated_at' | Defaults
> & {
  id?: string;
  created_at?: Date;
} & Partial<Pick<T, Defaults>>;

/** Updates name only the mutable fields they change. */
type Patch<T, Fixed extends keyof T = never> = Partial<Omit<T, 'id' | 'created_at' | 'updated_at' | Fixed>>;

/** Number of records of each kind that still reference a record (409 on delete when > 0). */
export type ReferenceCounts = Record<string, number>;

/**
 * Explicit row locking, for repositories whose records are changed by "read, check, write"
 * sequences (a job's status, an issuer's sealed config …).
 */
export interface Lockable<T> {
  /**
   * Locks record `id` until the surrounding transaction ends, and returns it as it is under
   * the lock.
   *
   * - What is locked: that one record (its row), exclusively. Until the transaction commits or
   *   rolls back, `lockForUpdate`, `update` and `delete` of the same record in any other
   *   transaction wait; plain reads (`get`, `list` …) never wait and keep seeing the last
   *   committed state.
   * - What is returned: the record's latest committed state, read under the lock — also on
   *   MySQL/MariaDB, where a plain read made earlier in the same transaction may be older. Take
   *   the lock before reading the record in the transaction and decide on what this returns.
   * - Nothing is written: `updated_at` keeps its value, so caches keyed on it stay valid.
   * - Must be called on the `tx` of a {@link Storage.transaction}: outside one there is nothing
   *   to hold the lock until, so it throws `internal` (a programming error) instead of
   *   returning an unlocked record.
   * - `not_found` when the record does not exist.
   * - Two transactions that lock the same records in opposite orders can deadlock; the engine
   *   aborts one of them, which fails `unavailable` and rolls back (retrying may succeed). Lock
   *   several records in one order (e.g. by id) to avoid it.
   */
  lockForUpdate(id: string): Promise<T>;
}

interface CrudRepository<T, New, Update> {
  create(input: New): Promise<T>;
  get(id: string): Promise<T | null>;
  /** Like get, but a missing record is `not_found`. */
  require(id: string): Promise<T>;
  update(id: string, patch: Update): Promise<T>;
  /** `conflict` while other records reference it. */
  delete(id: string): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Certificates and versions

export type NewCertificate = NewRecord<
  ManagedCertificate,
  | 'sans'
  | 'status'
  | 'source'
  | 'profile_id'
  | 'environment'
  | 'metadata'
  | 'tags'
  | 'current_version_id'
  | 'expires_at'
  | 'last_renewal_at'
>;
/** current_version_id and expires_at follow the versions; they are not patched directly. */
export type CertificatePatch = Patch<ManagedCertificate, 'current_version_id' | 'expires_at'>;

export interface CertificateFilter {
  ids?: string[];
  status?: CertificateStatus | CertificateStatus[];
  /** Excluded statuses (e.g. bulk renewal skips Archived, Revoked, Expired, RenewalInProgress). */
  notStatus?: CertificateStatus[];
  issuer_id?: string;
  owner_id?: string;
  team_id?: string;
  profile_id?: string;
  renewal_policy_id?: string;
  /** '' matches only unspecified provenance; leave undefined for any source. */
  source?: CertificateSource;
  environment?: string;
  /** Certificates bound to at least one target of this agent. */
  agent_id?: string;
  /** Latest version's not_after strictly before / at-or-after. Certificates without a version never match. */
  expiresBefore?: Date;
  expiresAfter?: Date;
  /** Case-insensitive substring of name, common_name or any SAN. */
  search?: string;
  /**
   * Some version (any issuer) has this serial number: lowercase hex without separators or
   * leading zeros (a stored serial with zero padding matches too).
   */
  serial?: string;
}

export interface CertificateListQuery extends CertificateFilter, PageRequest {
  sort?: CertificateSortField;
  order?: SortDirection;
  /**
   * Keyset paging: the rows strictly after this position in the list's order (sort column, then
   * id); `page` is then ignored. Reads only the page, however deep, where an offset reads every
   * row before it.
   */
  after?: CertificateListKey;
  /**
   * Count at most this many matches exactly; when more match, `total` is the planner's estimate
   * (never below this limit + 1) and `totalEstimated` is true. Absent: always exact.
   */
  exactTotalLimit?: number;
  /**
   * A total estimated earlier for the same query (a keyset cursor carries it): answered as
   * `total` with `totalEstimated` true, and nothing is counted.
   */
  estimatedTotal?: number;
}

/** A row's position in a sorted certificate list: its sort column's value and its id. */
export interface CertificateListKey {
  /** The sort column's value (a Date for the timestamp sorts; null for a certificate without expiry). */
  value: string | Date | null;
  id: string;
}

/** One page of certificates, with what keyset paging needs to continue. */
export interface CertificatePage extends PageResult<ManagedCertificate> {
  /** True when `total` is an estimate (more than `exactTotalLimit` matched). */
  totalEstimated: boolean;
  /** Position of the page's last row when more rows follow it; null on the last page. */
  next: CertificateListKey | null;
}

export interface CertificateRepository
  extends CrudRepository<ManagedCertificate, NewCertificate, CertificatePatch>,
    Lockable<ManagedCertificate> {
  list(query?: CertificateListQuery): Promise<CertificatePage>;
  /**
   * Ids matching a filter in id order, one batch at a time (keyset paging after `afterId`),
   * for bulk operations over many thousands of certificates.
   */
  listIds(filter: CertificateFilter, batch: { afterId?: string; limit: number }): Promise<string[]>;
  /** Applies one patch to many certificates in one statement; returns how many changed. */
  updateMany(ids: readonly string[], patch: CertificatePatch): Promise<number>;
  countByStatus(): Promise<Record<CertificateStatus, number>>;
  /**
   * How many certificates match: exact up to `exactLimit` (counting stops there, so the cost is
   * bounded), the planner's estimate above it (`estimated` true). Without a limit, exact.
   */
  count(
    filter: CertificateFilter,
    options?: { exactLimit?: number },
  ): Promise<{ total: number; estimated: boolean }>;
  /**
   * `count(filter, options)` for each filter, in order, with one statement for all the exact
   * parts (a dashboard asks for a dozen counts at once; docs/storage/README.md).
   */
  countEach(
    filters: readonly CertificateFilter[],
    options: { exactLimit: number },
  ): Promise<{ total: number; estimated: boolean }[]>;
  /** Replaces the target bindings of a certificate (`invalid_reference` for an unknown target). */
  setTargets(certificateId: string, targetIds: readonly string[]): Promise<void>;
  listTargetIds(certificateId: string): Promise<string[]>;
  /**
   * Renewal scan: certificates in `statuses` (default Active, Expiring) whose latest version
   * expires within their renewal policy's renewal_window_days of `now`, soonest first.
   */
  renewalDue(query: {
    now: Date;
    statuses?: CertificateStatus[];
    limit: number;
  }): Promise<ManagedCertificate[]>;
  references(id: string): Promise<ReferenceCounts>;
}

export type NewCertificateVersion = Omit<
  CertificateVersion,
  'id' | 'created_at' | 'revoked_at' | 'revocation_reason' | 'invalidity_date'
> & {
  id?: string;
  created_at?: Date;
  /** PKCS#8 PEM; sealed before it is stored. Null when the key never reaches the server. */
  private_key_pem?: string | null;
};

export interface Revocation {
  revoked_at: Date;
  reason: RevocationReason;
  invalidity_date?: Date | null;
}

export interface CertificateVersionRepository {
  /**
   * Stores a version and makes it the certificate's current one (current_version_id and
   * expires_at), atomically. `conflict` when (issuer_id, serial_number) is taken.
   */
  create(input: NewCertificateVersion): Promise<CertificateVersion>;
  /**
   * Stores a new certificate together with its first version, its current one from the start:
   * what `certificates.create` followed by `create` store, atomically and in fewer statements
   * (enrollment). Both timestamps default to one `now`, which is also the certificate's
   * updated_at. Inside {@link Storage.transaction} the storage may write the rows later —
   * before the transaction's next other call or at its commit, together with other new
   * certificates of the transaction (one statement for a group commit) — so a `conflict` may
   * surface there instead; every later call of the transaction sees the rows.
   */
  createWithCertificate(
    certificate: NewCertificate,
    version: Omit<NewCertificateVersion, 'certificate_id'>,
  ): Promise<{ certificate: ManagedCertificate; version: CertificateVersion }>;
  get(id: string): Promise<CertificateVersion | null>;
  /** Decrypts the private key; only for export and deployment. */
  getWithKey(id: string): Promise<CertificateVersionWithKey | null>;
  /** Whether the version's private key is held here (server-side generation); decrypts nothing. */
  hasPrivateKey(id: string): Promise<boolean>;
  latest(certificateId: string): Promise<CertificateVersion | null>;
  listForCertificate(certificateId: string, page?: PageRequest): Promise<PageResult<CertificateVersion>>;
  findBySerial(issuerId: string, serialNumber: string): Promise<CertificateVersion | null>;
  /** Marks a version revoked. A version already revoked keeps its first revocation. */
  revoke(id: string, revocation: Revocation): Promise<CertificateVersion>;
  /** Revokes every unrevoked version of the given certificates; returns how many changed. */
  revokeForCertificates(certificateIds: readonly string[], revocation: Revocation): Promise<number>;
  /** Revoked versions of an issuer in serial order, fetched page by page (CRL building). */
  streamRevoked(issuerId: string, pageSize?: number): AsyncIterable<CertificateVersion>;
  /**
   * What a CRL lists of each revoked version of an issuer (RFC 5280 §5.3: serial, revocation
   * date, reason, invalidity date) and nothing else, in serial order, one page per step. The
   * CRL builder's read: no PEM columns, no per-version objects beyond these four fields.
   */
  streamRevokedEntries(
    issuerId: string,
    pageSize?: number,
    /** Only versions revoked at or after this time (a delta CRL's read, RFC 5280 §5.2.4). */
    options?: { revokedSince?: Date },
  ): AsyncIterable<RevokedEntry[]>;
  /**
   * The issuer's revokedCertificates as stored (RFC 5280 §5.1.2.6): each revoked version's
   * entry DER, byte for byte `encodeCrlEntry` of its serial, revocation date, reason and
   * invalidity date, concatenated; one block per page of `pageSize` versions in serial order
   * (within a block the order is the database's). The CRL builder's read. A revoked version
   * without stored DER yet (revoked since the last build, or before the column existed) is
   * encoded and stored on the way, so this writes: call it in the transaction that should own
   * those writes.
   */
  streamCrlEntryBlocks(issuerId: string, pageSize?: number): AsyncIterable<Uint8Array>;
}

/** One revoked version as a CRL entry needs it. */
export interface RevokedEntry {
  serial_number: string;
  revoked_at: Date;
  revocation_reason: string | null;
  invalidity_date: Date | null;
}

// ---------------------------------------------------------------------------------------------
// Reference data

export type NewOwner = NewRecord<Owner, 'email'>;
export interface OwnerRepository extends CrudRepository<Owner, NewOwner, Patch<Owner>> {
  list(query?: PageRequest & { search?: string }): Promise<PageResult<Owner>>;
  references(id: string): Promise<ReferenceCounts>;
}

export type NewTeam = NewRecord<Team, 'description'>;
export interface TeamRepository extends CrudRepository<Team, NewTeam, Patch<Team>> {
  list(query?: PageRequest & { search?: string }): Promise<PageResult<Team>>;
  references(id: string): Promise<ReferenceCounts>;
}

export type NewIssuer = NewRecord<Issuer, 'enabled'> & { config?: IssuerConfig };
export type IssuerPatch = Patch<Issuer> & { config?: IssuerConfig };
export interface IssuerRepository extends CrudRepository<Issuer, NewIssuer, IssuerPatch>, Lockable<Issuer> {
  /** Decrypts the connector config; for the issuing pipeline only, never for API output. */
  getWithConfig(id: string): Promise<IssuerWithConfig | null>;
  /**
   * Replaces the sealed config **without** changing `updated_at`: for state the service keeps
   * in the config that no connector reads (the last CRL number), so that caches of connectors
   * keyed on `updated_at` stay valid. Anything a connector depends on goes through `update`.
   * Must run in a transaction that holds the issuer's `lockForUpdate` (a read-modify-write):
   * `internal` outside a transaction, `not_found` for a missing issuer.
   */
  updateConfigState(id: string, config: IssuerConfig): Promise<void>;
  list(
    query?: PageRequest & { type?: IssuerType; enabled?: boolean; search?: string },
  ): Promise<PageResult<Issuer>>;
  references(id: string): Promise<ReferenceCounts>;
}

export type NewProfile = Omit<
  NewRecord<
    CertificateProfile,
    | 'description'
    | 'allowed_ekus'
    | 'required_csr_attributes'
    | 'must_staple'
    | 'allow_ip_sans'
    | 'short_lived_validity_hours'
    | 'key_generation'
    | 'allowed_key_algorithms'
    | 'enrollment'
    | 'acme'
    | 'est'
    | 'scep'
  >,
  'enrollment_secrets_set'
> & {
  /** Write-only protocol secrets; sealed before they are stored. */
  enrollment_secrets?: EnrollmentSecrets;
};
/** `enrollment_secrets` replaces every stored secret (the service merges first). */
export type ProfilePatch = Omit<Patch<CertificateProfile>, 'enrollment_secrets_set'> & {
  enrollment_secrets?: EnrollmentSecrets;
};
export interface ProfileRepository extends CrudRepository<CertificateProfile, NewProfile, ProfilePatch> {
  list(query?: PageRequest & { search?: string }): Promise<PageResult<CertificateProfile>>;
  references(id: string): Promise<ReferenceCounts>;
  /** The profile and its opened secrets; for protocol handlers only, never for API output. */
  getWithSecrets(id: string): Promise<{ profile: CertificateProfile; secrets: EnrollmentSecrets } | null>;
  /**
   * The profile whose `protocol` block has this path_id. Path ids are unique per protocol: a
   * create or update taking one that another profile holds is `conflict`.
   */
  findByPathId(protocol: EnrollmentProtocol, pathId: string): Promise<CertificateProfile | null>;
}

export type NewRenewalPolicy = NewRecord<
  RenewalPolicy,
  'renewal_window_days' | 'retry_interval_seconds' | 'alert_thresholds_days' | 'max_retries'
>;
export interface RenewalPolicyRepository
  extends CrudRepository<RenewalPolicy, NewRenewalPolicy, Patch<RenewalPolicy>> {
  getByName(name: string): Promise<RenewalPolicy | null>;
  list(query?: PageRequest & { search?: string }): Promise<PageResult<RenewalPolicy>>;
  references(id: string): Promise<ReferenceCounts>;
}

export type NewPolicyRule = NewRecord<PolicyRule, 'severity' | 'enabled' | 'description' | 'config'>;
export interface PolicyRuleRepository extends CrudRepository<PolicyRule, NewPolicyRule, Patch<PolicyRule>> {
  list(query?: PageRequest & { type?: PolicyRuleType; enabled?: boolean }): Promise<PageResult<PolicyRule>>;
}

export type NewViolation = Omit<PolicyViolation, 'id' | 'detected_at'> & { id?: string; detected_at?: Date };
export interface ViolationRepository {
  create(input: NewViolation): Promise<PolicyViolation>;
  get(id: string): Promise<PolicyViolation | null>;
  list(
    query?: PageRequest & {
      certificate_id?: string;
      rule_id?: string;
      severity?: Severity;
      rule_type?: PolicyRuleType;
    },
  ): Promise<PageResult<PolicyViolation>>;
  /** Replaces all violations of one certificate (re-evaluation) atomically. */
  replaceForCertificate(
    certificateId: string,
    violations: readonly NewViolation[],
  ): Promise<PolicyViolation[]>;
  delete(id: string): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Agents, targets, jobs

export type NewAgent = Omit<
  Agent,
  'id' | 'registered_at' | 'retired_at' | 'retired_reason' | 'last_heartbeat_at' | 'status'
> & {
  id?: string;
  registered_at?: Date;
  status?: AgentStatus;
  last_heartbeat_at?: Date | null;
  /** SHA-256 hex of the agent key; unique; never returned by any read. */
  api_key_hash: string | null;
};
export type AgentPatch = Partial<Omit<Agent, 'id' | 'registered_at'>> & { api_key_hash?: string | null };

export interface AgentRepository extends Lockable<Agent> {
  create(input: NewAgent): Promise<Agent>;
  get(id: string): Promise<Agent | null>;
  require(id: string): Promise<Agent>;
  /** The agent whose key hashes to this value (retired ones included: callers answer 410). */
  getByApiKeyHash(apiKeyHash: string): Promise<Agent | null>;
  update(id: string, patch: AgentPatch): Promise<Agent>;
  list(query?: PageRequest & { retired?: boolean; status?: AgentStatus }): Promise<PageResult<Agent>>;
  /** Active (unretired) targets, certificates bound to them, open jobs. */
  dependencyCounts(id: string): Promise<AgentDependencyCounts>;
}

export type NewTarget = NewRecord<DeploymentTarget, 'enabled' | 'retired_at' | 'retired_reason'> & {
  config?: TargetConfig;
};
export type TargetPatch = Patch<DeploymentTarget, 'agent_id'> & { config?: TargetConfig };
export interface TargetRepository extends CrudRepository<DeploymentTarget, NewTarget, TargetPatch> {
  getWithConfig(id: string): Promise<DeploymentTargetWithConfig | null>;
  list(
    query?: PageRequest & { agent_id?: string; type?: TargetType; retired?: boolean },
  ): Promise<PageResult<DeploymentTarget>>;
  /** Retires every active target of an agent with one timestamp; returns how many. */
  retireForAgent(agentId: string, at: Date, reason: string): Promise<number>;
  /** Unretired targets bound to a certificate (deployment fan-out). */
  listForCertificate(certificateId: string): Promise<DeploymentTarget[]>;
}

export type NewJob = Omit<
  Job,
  | 'id'
  | 'created_at'
  | 'updated_at'
  | 'status'
  | 'attempts'
  | 'max_attempts'
  | 'last_error'
  | 'csr_pem'
  | 'scheduled_at'
  | 'started_at'
  | 'completed_at'
  | 'locked_by'
  | 'lease_expires_at'
  | 'verification_status'
  | 'verification_detail'
  | 'verified_at'
  | 'payload'
  | 'result'
  | 'certificate_id'
  | 'target_id'
  | 'agent_id'
> &
  Partial<Omit<Job, 'id' | 'created_at' | 'updated_at' | 'type'>> & { id?: string; created_at?: Date };
export type JobPatch = Patch<Job, 'type'>;

export interface JobListQuery extends PageRequest {
  status?: JobStatus | JobStatus[];
  type?: JobType;
  certificate_id?: string;
  target_id?: string;
  agent_id?: string;
  /** Finished (completed_at set) at or after this instant. */
  completed_after?: Date;
}

export interface JobRepository extends Omit<CrudRepository<Job, NewJob, JobPatch>, 'delete'>, Lockable<Job> {
  /**
   * Creates many jobs at once, all or none (bulk renewal opens one job per certificate, up to
   * thousands per call): each job exactly as `create` would store it, returned in input order.
   * Any bad input (e.g. an unknown agent, `invalid_reference`) fails the whole call and stores
   * nothing.
   */
  createMany(inputs: readonly NewJob[]): Promise<Job[]>;
  list(query?: JobListQuery): Promise<PageResult<Job>>;
  /** Jobs by status, exact, every status present (0 when none): one statement for the dashboard. */
  countByStatus(): Promise<Record<JobStatus, number>>;
  /**
   * Atomically claims up to `limit` Pending jobs due at `now` (and Running jobs whose lease
   * expired), skipping rows other claimers hold (`FOR UPDATE SKIP LOCKED`): each claimed job
   * becomes Running, attempts + 1, locked_by = worker, lease_expires_at = now + leaseMs.
   * Concurrent claimers never receive the same job.
   */
  claimDue(query: {
    now: Date;
    worker: string;
    leaseMs: number;
    limit: number;
    types?: JobType[];
    agentId?: string | null;
  }): Promise<Job[]>;
  /** Open jobs addressed to an agent (its work poll): Pending and AwaitingCSR, oldest first. */
  listOpenForAgent(agentId: string, limit?: number): Promise<Job[]>;
  /**
   * Running jobs whose lease expired before `now` and whose attempts are used up become Failed
   * with `reason`; returns them.
   */
  failExpired(now: Date, reason: string): Promise<Job[]>;
  /** Cancels open jobs of a certificate (e.g. on archive); returns how many. */
  cancelOpenForCertificate(certificateId: string, at: Date): Promise<number>;
}

// ---------------------------------------------------------------------------------------------
// Notifications, webhooks, audit

export type NewNotification = Omit<
  NotificationEvent,
  | 'id'
  | 'created_at'
  | 'updated_at'
  | 'status'
  | 'retry_count'
  | 'next_retry_at'
  | 'last_error'
  | 'sent_at'
  | 'certificate_id'
> &
  Partial<
    Pick<
      NotificationEvent,
      'status' | 'retry_count' | 'next_retry_at' | 'last_error' | 'sent_at' | 'certificate_id'
    >
  > & {
    id?: string;
    /** Left out (or the zero time) → now. */
    created_at?: Date;
  };

export interface NotificationRepository extends Lockable<NotificationEvent> {
  create(input: NewNotification): Promise<NotificationEvent>;
  get(id: string): Promise<NotificationEvent | null>;
  require(id: string): Promise<NotificationEvent>;
  /** A patch that sets `status` also releases the event's delivery claim (see {@link claim}). */
  update(id: string, patch: Patch<NotificationEvent, 'type'>): Promise<NotificationEvent>;
  /** Every event whatever its claim: the API's view. */
  list(
    query?: PageRequest & {
      status?: NotificationStatus | NotificationStatus[];
      type?: NotificationType;
      certificate_id?: string;
      channel?: string;
    },
  ): Promise<PageResult<NotificationEvent>>;
  /**
   * Claims an event for one delivery attempt until `until` (a lease), atomically: it succeeds
   * only while the event still has the `status` and `retry_count` the caller read and no claim
   * that is unexpired at `now`. Of concurrent callers exactly one gets the event back; the
   * others get null. The next status write releases the claim; a holder that dies leaves it
   * to expire, after which the event is due again (at-least-once delivery).
   */
  claim(
    seen: Pick<NotificationEvent, 'id' | 'status' | 'retry_count'>,
    now: Date,
    until: Date,
  ): Promise<NotificationEvent | null>;
  /** Pending events without a claim unexpired at `now`, oldest first. */
  pendingUnclaimed(now: Date, limit: number): Promise<NotificationEvent[]>;
  /**
   * Failed events whose next_retry_at is at or before `now` and without a claim unexpired at
   * `now`, oldest retry first.
   */
  dueForRetry(now: Date, limit: number): Promise<NotificationEvent[]>;
  countByStatus(): Promise<Record<NotificationStatus, number>>;
}

/** The URL and header values are sealed at rest; the record keeps the URL masked and the header names. */
export type NewWebhook = Omit<
  NewRecord<Webhook, 'enabled' | 'method' | 'service' | 'template' | 'header_names' | 'events' | 'options'>,
  'url_masked' | 'header_names'
> & { url: string; headers?: WebhookHeaders };
export type WebhookPatch = Patch<Webhook, 'header_names' | 'url_masked'> & {
  url?: string;
  headers?: WebhookHeaders;
};
export interface WebhookRepository extends CrudRepository<Webhook, NewWebhook, WebhookPatch> {
  getWithHeaders(id: string): Promise<WebhookWithHeaders | null>;
  list(query?: PageRequest & { enabled?: boolean }): Promise<PageResult<Webhook>>;
}

/** A probe result to store; the id is generated when left out. */
export type NewScepProbe = Omit<ScepProbe, 'id'> & { id?: string };

/** SCEP probe results (docs/protocols/scep-probe.md); append-only. */
export interface ScepProbeRepository {
  create(input: NewScepProbe): Promise<ScepProbe>;
  /**
   * The newest `limit` results (1–200; other values are clamped), newest `probed_at` first;
   * results of the same millisecond in descending id order.
   */
  recent(limit: number): Promise<ScepProbe[]>;
}

/**
 * Operator settings changed at run time through the API (the webhook private-range allowlist …),
 * one text value per name. Every instance reads the stored value, so a change applies at once.
 */
export interface SettingsRepository {
  /** The stored value, or null when the setting was never written. */
  get(name: string): Promise<string | null>;
  /** Writes (inserts or replaces) the value. */
  put(name: string, value: string): Promise<void>;
}

export interface AuditStreamQuery {
  /** occurred_at at or after. */
  from?: Date;
  /** occurred_at strictly before. */
  to?: Date;
  category?: AuditCategory;
  /** At most this many events in all. */
  limit?: number;
  /** Rows fetched per round trip (default 1000); bounds memory. */
  pageSize?: number;
  /** Start after this seq (resume a chain verification). */
  afterSeq?: number;
}

export interface AuditRepository {
  /**
   * Appends one event to the chain: chains it onto the head (read under a row lock inside the
   * transaction, or the head this storage last committed, which the write then moves only if it
   * is still the stored head), so concurrent appends serialize and the chain never forks; stores
   * the event with its HMAC under the chain key and moves the head, with its own MAC, in the
   * same transaction. Inside `transaction`, the returned event's `seq`, `prev_hash` and `hash`
   * are final once the transaction committed.
   */
  append(event: NewAuditEvent): Promise<AuditEvent>;
  /** Events in chain order, fetched page by page; never buffers the whole range. */
  stream(query?: AuditStreamQuery): AsyncIterable<AuditEvent>;
  /** The stored head: seq and hash of the newest event ({seq: 0} for an empty trail). */
  head(): Promise<AuditHead>;
  /**
   * Verifies the whole trail under this storage's chain key against the stored head (see
   * `verifyAuditChain`), and, when given, against an anchor an operator recorded earlier.
   * Events appended while it runs are not reported.
   */
  verify(anchor?: AuditAnchor): Promise<AuditVerification & { head: AuditHead }>;
  list(
    query?: PageRequest & { action?: string; resource_id?: string; category?: AuditCategory },
  ): Promise<PageResult<AuditEvent>>;
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Names

/**
 * The names of records by id, for lists that show a related record by its name rather than its
 * id (a job's certificate and target, an audit event's actor). One statement per call.
 */
export interface NameRepository {
  /**
   * The name of each record of `kind` among `ids`; ids that match no record are left out. A
   * user's name is its display name, else its e-mail address, else its subject, and only users
   * of `tenantId` are answered.
   */
  namesOf(kind: NamedKind, ids: readonly string[], tenantId: string): Promise<Map<string, string>>;
}

export interface Storage extends AcmeStorage, ScepStorage, DiscoveryStorage, PeopleStorage {
  readonly engine: 'postgres' | 'pglite' | 'mysql';
  readonly certificates: CertificateRepository;
  readonly versions: CertificateVersionRepository;
  readonly issuers: IssuerRepository;
  readonly owners: OwnerRepository;
  readonly teams: TeamRepository;
  readonly profiles: ProfileRepository;
  readonly renewalPolicies: RenewalPolicyRepository;
  readonly policyRules: PolicyRuleRepository;
  readonly violations: ViolationRepository;
  readonly agents: AgentRepository;
  readonly targets: TargetRepository;
  readonly jobs: JobRepository;
  readonly notifications: NotificationRepository;
  readonly webhooks: WebhookRepository;
  readonly settings: SettingsRepository;
  readonly audit: AuditRepository;
  readonly scepProbes: ScepProbeRepository;
  readonly names: NameRepository;
  /**
   * Runs `fn` in one database transaction: it commits when `fn` resolves and rolls back when it
   * throws (the error is rethrown). Use only the `tx` handed in inside `fn`. Calling
   * `transaction` on `tx` joins the running transaction.
   */
  transaction<T>(fn: (tx: Storage) => Promise<T>): Promise<T>;
  /**
   * Runs `callback` once the transaction of this `tx` has committed (outside a transaction: at
   * once), in registration order; never when it rolls back. For work that must see the change
   * committed, such as enqueueing its asynchronous follow-up. The callback runs after
   * `transaction` resolved its caller's work and must handle its own failures: a throw or a
   * rejection is ignored.
   */
  afterCommit(callback: () => unknown): void;
  /** Round trip to the database; `unavailable` when it cannot be reached. */
  ping(): Promise<void>;
}
