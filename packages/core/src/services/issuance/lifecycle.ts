import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { CertificateVersion, ManagedCertificate } from '../../domain/certificate.js';
import type { Job } from '../../domain/job.js';
import type { CertificateProfile } from '../../domain/profile.js';
import type { RenewalPolicy } from '../../domain/renewal-policy.js';
import { fail, isCertwrightError, notFound, publicMessage } from '../../errors.js';
import type { IssuerConnectorRegistry } from '../../issuers/connector.js';
import { defaultIssuerConnectors } from '../../issuers/index.js';
import { type CertificateDetails, describeEach } from '../../pki/certificate-details.js';
import { logAttemptFailure } from '../../ports/attempt-log.js';
import type { Storage } from '../../ports/storage.js';
import type { AuditService } from '../audit.js';
import { type Actor, type ServiceDeps, SYSTEM_ACTOR } from '../context.js';
import { parseInput } from '../input.js';
import type { JobService } from '../jobs.js';
import type { NotificationService } from '../notifications.js';
import { reportOutcome } from '../outcomes.js';
import type { PolicyEvaluationService } from '../policies.js';
import {
  DEFAULT_MAX_VALIDITY_DAYS_WITHOUT_PROFILE,
  type IssueParameters,
  signingMaterialFor,
} from './certificate-request.js';
import { IssuerConnectorCache } from './connector-cache.js';
import { CertificateExporter, type ExportedFile } from './export.js';
import { IssuanceJobOpener, type IssuanceJobType, JOB_LEASE_MS } from './open-job.js';
import { type IssueInput, issueRequestSchema, type pkcs12ExportSchema } from './schemas.js';
import {
  CertificateSigner,
  type IssuanceHooks,
  type IssuerReadCacheOptions,
  type SigningMaterial,
} from './signing.js';

/**
 * Issuance and renewal of managed certificates: synchronous `issue`/`renew`, and the issuance
 * worker that runs due Issuance and Renewal jobs (`processDueJobs`, `runJob`). Every job is
 * opened by `IssuanceJobOpener`; every signature goes through `CertificateSigner`
 * (crash safety is described there).
 */

export interface LifecycleOptions {
  /** External base URL (`https://pki.example.com:8443`) written into CDP and AIA OCSP extensions. */
  publicBaseUrl?: string;
  connectors?: IssuerConnectorRegistry;
  hooks?: IssuanceHooks;
  /** The signer's reuse of issuer reads (signing.ts); without it every signature reads its issuer. */
  issuerReads?: IssuerReadCacheOptions;
  /**
   * Longest validity, in days, of a leaf whose certificate has no profile (a profile's
   * max_validity_days rules otherwise). Default 397; the server reads `SVC_MAX_VALIDITY_DAYS_WITHOUT_PROFILE`.
   */
  maxValidityDaysWithoutProfile?: number;
}

export interface IssueOutcome {
  certificate: ManagedCertificate;
  job: Job;
  /** Absent while the job waits for an agent's CSR (AwaitingCSR). */
  version?: CertificateVersion;
}

export class LifecycleService {
  readonly connectors: IssuerConnectorCache;
  readonly signer: CertificateSigner;
  readonly jobOpener: IssuanceJobOpener;
  readonly #exporter: CertificateExporter;
  readonly #maxDaysWithoutProfile: number;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly jobs: JobService,
    private readonly notifications: NotificationService,
    private readonly evaluation: PolicyEvaluationService,
    options: LifecycleOptions = {},
  ) {
    this.connectors = new IssuerConnectorCache(
      deps,
      options.connectors ?? defaultIssuerConnectors(),
      options.publicBaseUrl,
    );
    this.signer = new CertificateSigner(deps, this.connectors, options.hooks, options.issuerReads);
    this.jobOpener = new IssuanceJobOpener(deps, workerIdOf(deps));
    this.#exporter = new CertificateExporter(deps, audit, this.connectors);
    this.#maxDaysWithoutProfile =
      options.maxValidityDaysWithoutProfile ?? DEFAULT_MAX_VALIDITY_DAYS_WITHOUT_PROFILE;
  }

  async #certificate(id: string, tx: Storage = this.deps.storage): Promise<ManagedCertificate> {
    const c = await tx.certificates.get(id);
    if (!c) throw notFound('certificate', id);
    return c;
  }

  async #profile(
    certificate: ManagedCertificate,
    tx: Storage = this.deps.storage,
  ): Promise<CertificateProfile | null> {
    return certificate.profile_id ? tx.profiles.get(certificate.profile_id) : null;
  }

  #prepare(
    certificate: ManagedCertificate,
    profile: CertificateProfile | null,
    input: IssueParameters,
  ): Promise<SigningMaterial> {
    return signingMaterialFor(
      this.deps.clock.now(),
      certificate,
      profile,
      input,
      this.#maxDaysWithoutProfile,
    );
  }

  /** Signs, then stores everything in one transaction (see the crash-safety note above). */
  async #signAndStore(
    job: Job,
    certificate: ManagedCertificate,
    material: SigningMaterial,
    kind: 'issue' | 'renew',
    actor: Actor,
  ): Promise<IssueOutcome> {
    const issued = await this.signer.sign(certificate.issuer_id, material, kind);
    const now = this.deps.clock.now();
    const stored = await this.deps.storage.transaction(async (tx) => {
      // A revocation (or archival) may have committed since the status was read: storing now
      // would make a revoked certificate Active again with an unrevoked serial. The row lock
      // orders this transaction with the revocation's update of the same row.
      const current = await tx.certificates.lockForUpdate(certificate.id);
      if (current.status === 'Revoked' || current.status === 'Archived') {
        this.deps.logger.warn(
          { certificate_id: certificate.id, job_id: job.id, serial_number: issued.serialNumber },
          'certificate changed while it was being signed; the new certificate was not stored',
        );
        throw fail(
          'invalid_state',
          `certificate '${certificate.id}' became ${current.status} while it was being ${kind === 'renew' ? 'renewed' : 'issued'}; nothing was stored`,
        );
      }
      const version = await this.signer.storeVersion(
        tx,
        certificate.id,
        certificate.issuer_id,
        material,
        issued,
      );
      const updated = await tx.certificates.update(certificate.id, {
        status: 'Active',
        ...(kind === 'renew' ? { last_renewal_at: now } : {}),
      });
      const done = await tx.jobs.update(job.id, {
        status: 'Completed',
        completed_at: now,
        locked_by: null,
        lease_expires_at: null,
        last_error: null,
        result: { version_id: version.id, serial_number: version.serial_number },
      });
      await this.jobs.createDeploymentJobs(certificate.id, version.id, { actor, tx });
      await this.evaluation.evaluateCertificate(certificate.id, tx);
      await this.audit.record(
        actor,
        {
          action: kind === 'renew' ? 'certificate_renewed' : 'certificate_issued',
          category: 'cert_lifecycle',
          resource_type: 'certificate',
          resource_id: certificate.id,
          details: {
            version_id: version.id,
            serial_number: version.serial_number,
            issuer_id: certificate.issuer_id,
            job_id: job.id,
            key_generation: material.keyPair ? 'server' : 'csr',
            not_after: version.not_after.toISOString(),
          },
        },
        tx,
      );
      if (kind === 'renew') {
        await this.#notify(tx, updated, 'RenewalSuccess', `Certificate ${updated.name} renewed`, [
          `Certificate ${updated.name} (${updated.id}) was renewed.`,
          `New serial: ${version.serial_number}`,
          `Valid until: ${version.not_after.toISOString()}`,
        ]);
      }
      return { certificate: updated, job: done, version };
    });
    reportOutcome(this.deps, {
      kind: kind === 'renew' ? 'renewal' : 'issuance',
      issuerId: certificate.issuer_id,
      outcome: 'success',
    });
    return stored;
  }

  #notify(
    tx: Storage,
    certificate: ManagedCertificate,
    type: 'RenewalSuccess' | 'RenewalFailure' | 'ExpirationWarning',
    subject: string,
    lines: string[],
  ): Promise<void> {
    return this.notifications.raiseForCertificate(tx, certificate, type, subject, lines).then(() => {});
  }

  /** Records a failed attempt: back to Pending after the retry interval while attempts remain, else Failed. */
  async #fail(job: Job, certificate: ManagedCertificate, error: unknown, actor: Actor): Promise<Job> {
    // The job, the audit event and the owner's notification carry the safe sentence; the cause
    // (a connector's or the storage's own message) goes to the log under the job's id.
    const message = publicMessage(error);
    const now = this.deps.clock.now();
    const failed = await this.deps.storage.transaction(async (tx) => {
      const policy = await tx.renewalPolicies.get(certificate.renewal_policy_id);
      const retry =
        job.attempts < job.max_attempts && !(isCertwrightError(error) && error.code === 'validation_failed');
      const updated = await tx.jobs.update(job.id, {
        status: retry ? 'Pending' : 'Failed',
        last_error: message,
        locked_by: null,
        lease_expires_at: null,
        ...(retry
          ? {
              scheduled_at: new Date(
                now.getTime() + retryDelaySeconds(error, policy?.retry_interval_seconds) * 1000,
              ),
            }
          : { completed_at: now }),
      });
      // A certificate revoked or archived meanwhile keeps that status: Failed would undo it.
      const current = await tx.certificates.lockForUpdate(certificate.id);
      const settled = current.status === 'Revoked' || current.status === 'Archived';
      if (!retry && !settled) {
        await tx.certificates.update(certificate.id, { status: 'Failed' });
        if (job.type === 'Renewal') {
          await this.#notify(
            tx,
            certificate,
            'RenewalFailure',
            `Renewal of certificate ${certificate.name} failed`,
            [
              `Renewal of certificate ${certificate.name} (${certificate.id}) failed after ${job.attempts} attempt(s).`,
              `Last error: ${message}`,
            ],
          );
        }
      }
      await this.audit.record(
        actor,
        {
          action: job.type === 'Renewal' ? 'certificate_renewal_failed' : 'certificate_issuance_failed',
          category: 'cert_lifecycle',
          resource_type: 'certificate',
          resource_id: certificate.id,
          details: { job_id: job.id, attempt: job.attempts, will_retry: retry, error: message },
        },
        tx,
      );
      return updated;
    });
    // One line per attempt with the next one's time, no stack (docs/operations/configuration.md, "Logs").
    logAttemptFailure(this.deps.logger, {
      message: `${job.type === 'Renewal' ? 'renewal' : 'issuance'} attempt failed`,
      attempt: job.attempts,
      maxAttempts: job.max_attempts,
      nextRetryAt: failed.status === 'Pending' ? failed.scheduled_at : null,
      error,
      fields: { job_id: job.id, certificate_id: certificate.id },
    });
    reportOutcome(this.deps, {
      kind: job.type === 'Renewal' ? 'renewal' : 'issuance',
      issuerId: certificate.issuer_id,
      outcome: 'failure',
    });
    return failed;
  }

  /**
   * Opens an Issuance or Renewal job for a certificate inside the caller's transaction (see
   * `IssuanceJobOpener`); returns the open job if one exists already.
   */
  openJob(certificateId: string, type: IssuanceJobType, tx: Storage = this.deps.storage): Promise<Job> {
    return this.jobOpener.open(tx, certificateId, type);
  }

  /** Lets an embedder queue issuance in the transaction that created the certificate. */
  enqueueIssuance(certificateId: string, tx: Storage = this.deps.storage): Promise<Job> {
    return this.openJob(certificateId, 'Issuance', tx);
  }

  async #run(
    certificateId: string,
    kind: 'issue' | 'renew',
    input: IssueInput,
    actor: Actor,
  ): Promise<IssueOutcome> {
    const data = parseInput(issueRequestSchema, input);
    const certificate = await this.#certificate(certificateId);
    assertRunnable(certificate, kind);
    if (kind === 'issue' && certificate.current_version_id && certificate.status !== 'Failed') {
      throw fail('invalid_state', `certificate '${certificateId}' is already issued; renew it instead`);
    }
    // A disabled issuer or an unsupported issuer type fails before any job exists.
    await this.signer.assertIssuerEnabled(certificate.issuer_id);
    await this.connectors.require(certificate.issuer_id);
    const profile = await this.#profile(certificate);
    if (profile?.key_generation === 'agent' && !data.csr_pem) {
      // The agent generates the key: the job waits for its CSR.
      const job = await this.deps.storage.transaction(async (tx) => {
        assertRunnable(await tx.certificates.lockForUpdate(certificateId), kind);
        const j = await this.openJob(certificateId, kind === 'issue' ? 'Issuance' : 'Renewal', tx);
        if (kind === 'renew') await tx.certificates.update(certificateId, { status: 'RenewalInProgress' });
        return j;
      });
      return { certificate: await this.#certificate(certificateId), job };
    }
    // Check everything before a job exists: a refused request leaves no trace but the 400.
    const material = await this.#prepare(certificate, profile, {
      csrPem: data.csr_pem ?? null,
      ...(data.key_algorithm ? { keyAlgorithm: data.key_algorithm } : {}),
      ...(data.validity_days ? { validityDays: data.validity_days } : {}),
    });
    const type = kind === 'issue' ? 'Issuance' : 'Renewal';
    const job = await this.deps.storage.transaction(async (tx) => {
      // The status was read without a lock and the key generated since: a revocation (or
      // archival) that committed meanwhile must not be overwritten by RenewalInProgress, which
      // the re-check before storing would no longer see as Revoked.
      assertRunnable(await tx.certificates.lockForUpdate(certificateId), kind);
      if (kind === 'renew') await tx.certificates.update(certificateId, { status: 'RenewalInProgress' });
      const [opened] = await this.jobOpener.openMany(tx, [certificate], type, { status: 'Running' });
      if (opened!.created) return opened!.job;
      // An open job (a scheduled retry, a renewal the scan opened) is claimed and run now.
      const now = this.deps.clock.now();
      return tx.jobs.update(opened!.job.id, {
        status: 'Running',
        attempts: opened!.job.attempts + 1,
        started_at: now,
        locked_by: this.jobOpener.workerId,
        lease_expires_at: new Date(now.getTime() + JOB_LEASE_MS),
      });
    });
    try {
      return await this.#signAndStore(job, certificate, material, kind, actor);
    } catch (error) {
      await this.#fail({ ...job, max_attempts: job.attempts }, certificate, error, actor);
      throw error;
    }
  }

  /** Issues the first version (POST /certificates/{id}/issue). */
  issue(actor: Actor, certificateId: string, input: IssueInput = {}): Promise<IssueOutcome> {
    return this.#run(certificateId, 'issue', input, actor);
  }

  /** Renews: a new version with a new serial (POST /certificates/{id}/renew). */
  renew(actor: Actor, certificateId: string, input: IssueInput = {}): Promise<IssueOutcome> {
    return this.#run(certificateId, 'renew', input, actor);
  }

  /**
   * Runs one claimed Issuance/Renewal job: server-side key generation, or the CSR the agent
   * submitted (`job.csr_pem`). Failures are recorded on the job (retry or Failed).
   */
  async runJob(actor: Actor, job: Job): Promise<IssueOutcome | null> {
    if (!job.certificate_id) return null;
    const certificate = await this.deps.storage.certificates.get(job.certificate_id);
    if (!certificate || certificate.status === 'Archived' || certificate.status === 'Revoked') {
      await this.deps.storage.jobs.update(job.id, {
        status: 'Cancelled',
        completed_at: this.deps.clock.now(),
        locked_by: null,
        lease_expires_at: null,
        last_error: certificate ? `certificate is ${certificate.status}` : 'certificate no longer exists',
      });
      return null;
    }
    try {
      const profile = await this.#profile(certificate);
      if (profile?.key_generation === 'agent' && !job.csr_pem) {
        await this.deps.storage.jobs.update(job.id, {
          status: 'AwaitingCSR',
          locked_by: null,
          lease_expires_at: null,
        });
        return null;
      }
      const material = await this.#prepare(certificate, profile, { csrPem: job.csr_pem });
      return await this.#signAndStore(
        job,
        certificate,
        material,
        job.type === 'Renewal' ? 'renew' : 'issue',
        actor,
      );
    } catch (error) {
      await this.#fail(job, certificate, error, actor);
      return null;
    }
  }

  /**
   * One pass of the issuance worker: opens Issuance jobs for certificates still Pending without
   * a version (created through the API, an import, MCP …), then claims due Issuance/Renewal jobs
   * and runs them. Returns how many jobs ran.
   */
  async processDueJobs(now: Date = this.deps.clock.now(), limit = 20): Promise<number> {
    const pending = await this.deps.storage.certificates.list({
      status: 'Pending',
      perPage: 100,
      sort: 'created_at',
      order: 'asc',
    });
    for (const c of pending.items) {
      if (c.current_version_id) continue;
      try {
        await this.deps.storage.transaction((tx) => this.openJob(c.id, 'Issuance', tx));
      } catch (error) {
        this.deps.logger.warn({ err: error, certificate_id: c.id }, 'could not open an issuance job');
      }
    }
    const jobs = await this.deps.storage.jobs.claimDue({
      now,
      worker: this.jobOpener.workerId,
      leaseMs: JOB_LEASE_MS,
      limit,
      types: ['Issuance', 'Renewal'],
    });
    for (const job of jobs) await this.runJob(SYSTEM_ACTOR, job);
    return jobs.length;
  }

  /** PEM: the certificate followed by its CA chain; DER: the certificate alone. No key. */
  export(certificateId: string, format: 'pem' | 'der'): Promise<ExportedFile> {
    return this.#exporter.export(certificateId, format);
  }

  /** PKCS#12 with key and chain under the caller's password (server-held keys only); audited. */
  exportPkcs12(
    actor: Actor,
    certificateId: string,
    input: z.input<typeof pkcs12ExportSchema>,
  ): Promise<ExportedFile> {
    return this.#exporter.exportPkcs12(actor, certificateId, input);
  }

  /** The CA chain of an issuer (PEM, issuing CA first). */
  caChain(issuerId: string): Promise<string[]> {
    return this.#exporter.caChain(issuerId);
  }

  /** The CA chain of an issuer decoded for display, issuing CA first. */
  async caChainDetails(
    issuerId: string,
  ): Promise<{ chain: CertificateDetails[]; chain_undecodable: number }> {
    const { chain, undecodable } = describeEach((await this.caChain(issuerId)).join(''));
    return { chain, chain_undecodable: undecodable };
  }

  /** For the renewal scheduler. */
  renewalPolicy(id: string): Promise<RenewalPolicy | null> {
    return this.deps.storage.renewalPolicies.get(id);
  }

  /** For the renewal scheduler: raises one ExpirationWarning inside `tx`. */
  expirationWarning(
    tx: Storage,
    certificate: ManagedCertificate,
    subject: string,
    lines: string[],
  ): Promise<void> {
    return this.#notify(tx, certificate, 'ExpirationWarning', subject, lines);
  }
}

/** The lease holder name of this process's jobs: the configured worker id, else a random one. */
function workerIdOf(deps: ServiceDeps): string {
  return deps.workerId ?? `worker-${Buffer.from(deps.random?.bytes(6) ?? randomBytes(6)).toString('hex')}`;
}

/**
 * Seconds until a failed attempt is retried: the renewal policy's interval (default an hour),
 * or — when the CA rate-limited the request and said when to come back (ACME `rateLimited`
 * with Retry-After) — that time if it is later.
 */
function retryDelaySeconds(error: unknown, policyInterval: number | undefined): number {
  const interval = policyInterval ?? 3600;
  const asked =
    isCertwrightError(error) && error.reason === 'rate_limited' ? error.extra.retry_after_seconds : undefined;
  return typeof asked === 'number' && Number.isFinite(asked)
    ? Math.max(interval, Math.ceil(asked))
    : interval;
}

/** The statuses `issue` and `renew` start from; anything else is refused (`invalid_state`). */
function assertRunnable(certificate: ManagedCertificate, kind: 'issue' | 'renew'): void {
  const allowed =
    kind === 'issue'
      ? ['Pending', 'Failed']
      : ['Active', 'Expiring', 'Expired', 'Failed', 'RenewalInProgress'];
  if (!allowed.includes(certificate.status)) {
    throw fail(
      'invalid_state',
      `certificate '${certificate.id}' is ${certificate.status}; ${kind === 'issue' ? 'issue needs Pending or Failed (use renew for an issued certificate)' : `renew needs one of ${allowed.join(', ')}`}`,
      { extra: { resource: 'certificate', id: certificate.id, certificate_status: certificate.status } },
    );
  }
}
