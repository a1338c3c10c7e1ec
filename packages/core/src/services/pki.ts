import type { CrlPublisher } from '../ports/crl-publisher.js';
import type { AuditService } from './audit.js';
import type { ServiceDeps } from './context.js';
import { type RevocationStatusOptions, RevocationStatusService } from './crl-ocsp.js';
import { type CrlPublicationOptions, CrlPublications } from './crl-publishing/publications.js';
import {
  DEFAULT_ENROLLMENT_READ_CACHE_MS,
  type EnrollmentReadCacheOptions,
  EnrollmentService,
} from './issuance/enrollment.js';
import { remoteRevocationListener } from './issuance/remote-revocation.js';
import { type LifecycleOptions, LifecycleService } from './issuance.js';
import type { JobService } from './jobs.js';
import type { NotificationService } from './notifications.js';
import type { PolicyEvaluationService } from './policies.js';
import { RenewalService } from './renewal.js';
import type { RevocationService } from './revocation.js';

/** The certificate-authority side of the services: issuing, renewing, exporting, CRL and OCSP. */
export interface PkiServices {
  readonly lifecycle: LifecycleService;
  /** The issuance path of the enrollment protocols (ACME finalize, EST, SCEP). */
  readonly enrollment: EnrollmentService;
  readonly revocationStatus: RevocationStatusService;
  readonly renewal: RenewalService;
}

export interface PkiOptions extends LifecycleOptions, RevocationStatusOptions {
  /** Publishes every regenerated CRL (a DirectoryCrlPublisher for SVC_CRL_PUBLISH_DIR). */
  crlPublisher?: CrlPublisher;
  /** Retries of a failed publication. */
  crlPublication?: CrlPublicationOptions;
  /** How long enrollment reuses profile and policy-rule reads (default 1000 ms; 0: never). */
  enrollmentReadCacheMs?: number;
}

export function createPkiServices(
  deps: ServiceDeps,
  parts: {
    audit: AuditService;
    jobs: JobService;
    notifications: NotificationService;
    policyEvaluation: PolicyEvaluationService;
    revocation: RevocationService;
    /** The change counters of ProfileService, PolicyRuleService and IssuerService; without them nothing is reused. */
    revisions?: Pick<EnrollmentReadCacheOptions, 'profileRevision' | 'policyRuleRevision'> & {
      issuerRevision?: () => number;
    };
  },
  options: PkiOptions = {},
): PkiServices {
  const { issuerRevision, ...enrollmentRevisions } = parts.revisions ?? {};
  const readCacheMs = options.enrollmentReadCacheMs ?? DEFAULT_ENROLLMENT_READ_CACHE_MS;
  const lifecycle = new LifecycleService(
    deps,
    parts.audit,
    parts.jobs,
    parts.notifications,
    parts.policyEvaluation,
    {
      ...options,
      ...(issuerRevision && !options.issuerReads
        ? { issuerReads: { ttlMs: readCacheMs, revision: issuerRevision } }
        : {}),
    },
  );
  const publications = options.crlPublisher
    ? new CrlPublications(deps, parts.audit, options.crlPublisher, options.crlPublication)
    : undefined;
  const revocationStatus = new RevocationStatusService(deps, lifecycle.connectors, options, publications);
  // Single and bulk revocation both commit through RevocationService; the listener runs before
  // the revoke call returns, so CRL and OCSP reflect the revocation by then.
  parts.revocation.onRevoked(revocationStatus.onRevoked);
  // Remote CAs (ACME) hear of a revocation through their connector, after the commit.
  parts.revocation.onRevoked(remoteRevocationListener(deps, lifecycle.connectors));
  const enrollment = new EnrollmentService(
    deps,
    parts.audit,
    parts.jobs,
    parts.policyEvaluation,
    lifecycle.signer,
    {
      ...enrollmentRevisions,
      ...(options.enrollmentReadCacheMs !== undefined ? { readCacheMs: options.enrollmentReadCacheMs } : {}),
    },
  );
  return { lifecycle, enrollment, revocationStatus, renewal: new RenewalService(deps, lifecycle) };
}
