import type { PageRequest, PageResult } from '../domain/common.js';
import type {
  DiscoveredCertificate,
  DiscoveredStatus,
  DiscoveryScan,
  HealthCheck,
  HealthCheckResult,
  HealthStatus,
  ScanTarget,
} from '../domain/discovery.js';

/*
 * Storage of network discovery and endpoint health. Same error contract as the rest of the
 * storage port (not_found, conflict, invalid_reference, unavailable).
 */

export type NewScanTarget = Omit<
  ScanTarget,
  'id' | 'created_at' | 'updated_at' | 'last_scan_at' | 'next_scan_at'
> & { id?: string; next_scan_at?: Date | null };
export type ScanTargetPatch = Partial<Omit<ScanTarget, 'id' | 'created_at' | 'updated_at'>>;

export interface ScanTargetRepository {
  create(input: NewScanTarget): Promise<ScanTarget>;
  get(id: string): Promise<ScanTarget | null>;
  require(id: string): Promise<ScanTarget>;
  update(id: string, patch: ScanTargetPatch): Promise<ScanTarget>;
  delete(id: string): Promise<void>;
  list(query?: PageRequest & { enabled?: boolean }): Promise<PageResult<ScanTarget>>;
  /** Enabled targets with a schedule whose next_scan_at is at or before `now`, soonest first. */
  due(now: Date, limit: number): Promise<ScanTarget[]>;
}

export type NewDiscoveryScan = Pick<DiscoveryScan, 'target_id' | 'source' | 'started_at'> & { id?: string };
export type DiscoveryScanPatch = Partial<
  Pick<
    DiscoveryScan,
    | 'status'
    | 'finished_at'
    | 'endpoints_total'
    | 'endpoints_tls'
    | 'certificates_found'
    | 'certificates_new'
    | 'errors_count'
    | 'errors'
  >
>;

export interface DiscoveryScanRepository {
  /** Stores a `running` scan with zero counts. */
  create(input: NewDiscoveryScan): Promise<DiscoveryScan>;
  get(id: string): Promise<DiscoveryScan | null>;
  require(id: string): Promise<DiscoveryScan>;
  update(id: string, patch: DiscoveryScanPatch): Promise<DiscoveryScan>;
  /** Newest first. */
  list(
    query?: PageRequest & { target_id?: string; status?: DiscoveryScan['status']; source?: string },
  ): Promise<PageResult<DiscoveryScan>>;
  /** Scans still `running` that started before `before` become `failed` (a dead scanner); returns how many. */
  failStale(before: Date, at: Date): Promise<number>;
}

/** A certificate as a source saw it, before deduplication. */
export type NewDiscoveredCertificate = Omit<
  DiscoveredCertificate,
  | 'id'
  | 'status'
  | 'certificate_id'
  | 'first_seen_at'
  | 'last_seen_at'
  | 'sightings'
  | 'created_at'
  | 'updated_at'
>;

export interface SightingInput {
  source: string;
  scan_id: string | null;
  address: string | null;
  port: number | null;
  sni: string | null;
  path: string | null;
  seen_at: Date;
}

export interface DiscoveredCertificateFilter {
  status?: DiscoveredStatus;
  /** Case-insensitive substring of the issuer name. */
  issuer?: string;
  /** not_after strictly before. */
  expires_before?: Date;
  /** not_after at or after. */
  expires_after?: Date;
  /** Seen at this address (any port) or host path. */
  seen_address?: string;
  seen_port?: number;
  source?: string;
  scan_id?: string;
  /** Case-insensitive substring of subject or any SAN. */
  search?: string;
}

export interface DiscoveredCertificateRepository {
  /**
   * Records one sighting of a certificate: creates the record when its fingerprint is new,
   * otherwise refreshes last_seen_at; the sighting's location is added or refreshed. When
   * `certificate_id` is given and the record has none, it is linked and becomes `managed`.
   * Returns the record and whether it was new. Concurrent records of one fingerprint converge
   * on a single record.
   */
  record(
    cert: NewDiscoveredCertificate,
    sighting: SightingInput,
    certificate_id?: string | null,
  ): Promise<{ record: DiscoveredCertificate; created: boolean }>;
  get(id: string): Promise<DiscoveredCertificate | null>;
  require(id: string): Promise<DiscoveredCertificate>;
  getByFingerprint(fingerprint: string): Promise<DiscoveredCertificate | null>;
  update(
    id: string,
    patch: Partial<Pick<DiscoveredCertificate, 'status' | 'certificate_id'>>,
  ): Promise<DiscoveredCertificate>;
  /** Soonest expiry first. */
  list(query?: PageRequest & DiscoveredCertificateFilter): Promise<PageResult<DiscoveredCertificate>>;
  count(filter?: DiscoveredCertificateFilter): Promise<number>;
  countByStatus(): Promise<Record<DiscoveredStatus, number>>;
  /** Unmanaged-or-managed (not dismissed) counts per issuer name, largest first, at most `limit`. */
  countByIssuer(limit: number): Promise<{ issuer: string; count: number }[]>;
  /** The managed certificate whose some version has this fingerprint (links sightings). */
  findManagedByFingerprint(
    fingerprint: string,
  ): Promise<{ certificate_id: string; version_id: string } | null>;
}

export type NewHealthCheck = Pick<
  HealthCheck,
  | 'name'
  | 'host'
  | 'port'
  | 'sni'
  | 'expected_fingerprint'
  | 'certificate_id'
  | 'interval_seconds'
  | 'deployment_window_seconds'
  | 'enabled'
> & { id?: string; next_check_at?: Date | null };
export type HealthCheckPatch = Partial<Omit<HealthCheck, 'id' | 'created_at' | 'updated_at'>>;

export interface HealthCheckRepository {
  /** Stores a `healthy` check with no observation yet. */
  create(input: NewHealthCheck): Promise<HealthCheck>;
  get(id: string): Promise<HealthCheck | null>;
  require(id: string): Promise<HealthCheck>;
  /** Locks the check's row for a read-modify-write (see Lockable in storage.ts). */
  lockForUpdate(id: string): Promise<HealthCheck>;
  update(id: string, patch: HealthCheckPatch): Promise<HealthCheck>;
  /** Removes the check and its history. */
  delete(id: string): Promise<void>;
  list(
    query?: PageRequest & {
      status?: HealthStatus;
      enabled?: boolean;
      certificate_id?: string;
      search?: string;
    },
  ): Promise<PageResult<HealthCheck>>;
  /** Enabled checks whose next_check_at is at or before `now` (or unset), oldest due first. */
  due(now: Date, limit: number): Promise<HealthCheck[]>;
  countByStatus(): Promise<Record<HealthStatus, number>>;
  /** Checks in degraded, down or cert_mismatch that nobody acknowledged. */
  countUnacknowledged(): Promise<number>;
  /** Checks watching a managed certificate (renewal moves their expectation). */
  listForCertificate(certificateId: string): Promise<HealthCheck[]>;
  addResult(result: Omit<HealthCheckResult, 'id'> & { id?: string }): Promise<HealthCheckResult>;
  /** Newest first. */
  listResults(checkId: string, page?: PageRequest): Promise<PageResult<HealthCheckResult>>;
  /** Deletes results checked before `before`; returns how many. */
  pruneResults(before: Date): Promise<number>;
}

export interface DiscoveryStorage {
  readonly scanTargets: ScanTargetRepository;
  readonly discoveryScans: DiscoveryScanRepository;
  readonly discovered: DiscoveredCertificateRepository;
  readonly healthChecks: HealthCheckRepository;
}
