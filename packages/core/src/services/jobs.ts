import { z } from 'zod';
import {
  type Job,
  type JobStatus,
  jobStatusSchema,
  jobTypeSchema,
  OPEN_JOB_STATUSES,
  type VerificationStatus,
} from '../domain/job.js';
import { CertwrightError, fail, invalidState, notFound } from '../errors.js';
import { parseCertificationRequest } from '../pki/csr.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import {
  type Actor,
  type AgentSettings,
  DEFAULT_AGENT_SETTINGS,
  type ServiceDeps,
  SYSTEM_ACTOR,
} from './context.js';
import { commaList, definedFields, instantSchema, parseInput } from './input.js';
import { AGENT_JOB_TYPES, VALIDATION_KINDS } from './job-kinds.js';
import type { NotificationService } from './notifications.js';
import { type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

/** Reasons written to `last_error` when the timeout sweep fails a job. */
export const JOB_TIMEOUT_REASONS = {
  lease: 'timed out: the agent held the job past its lease on every attempt',
  csr: 'timed out: no CSR was submitted while the job awaited one',
} as const;

/**
 * What an agent reports about one of its jobs: `Running` renews its lease (a progress signal);
 * `Completed` and `Failed` end the job, `error` becoming its last_error and `result` its
 * job-specific output (e.g. a connection test's findings).
 */
export const agentJobReportSchema = z.object({
  status: z.enum(['Running', 'Completed', 'Failed']),
  error: z.string().max(4000).optional(),
  result: z.record(z.string(), z.unknown()).optional(),
});
export type AgentJobReport = z.input<typeof agentJobReportSchema>;

/** An agent's CSR for an AwaitingCSR job. */
export const agentCsrSchema = z.object({
  csr_pem: z
    .string()
    .min(1)
    .max(64 * 1024),
});

const recordId = z.string().min(1).max(128);

/** Filters of the job list; `status` takes several values. */
export const jobListSchema = pageQuerySchema.extend({
  status: commaList(jobStatusSchema).optional().describe('comma-separated job statuses'),
  type: jobTypeSchema.optional(),
  certificate_id: recordId.optional(),
  target_id: recordId.optional(),
  agent_id: recordId.optional(),
  completed_after: instantSchema.optional().describe('finished at or after (RFC 3339)'),
});
export type JobListRequest = z.input<typeof jobListSchema>;

export interface JobVerification {
  job_id: string;
  status: VerificationStatus;
  detail: string | null;
  verified_at: Date | null;
  /** The Validation job the agent runs to verify, when one was created. */
  validation_job_id: string | null;
}

const isOpen = (status: JobStatus) => OPEN_JOB_STATUSES.includes(status);

/**
 * Jobs move work between the server and agents: Deployment jobs after issuance/renewal,
 * Validation jobs for target connection tests and deployment verification, and the Issuance /
 * Renewal jobs that wait in AwaitingCSR for an agent's CSR.
 */
export class JobService {
  readonly #settings: AgentSettings;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly notifications: NotificationService,
  ) {
    this.#settings = { ...DEFAULT_AGENT_SETTINGS, ...deps.agentSettings };
  }

  /** Jobs, newest first. */
  async list(query: JobListRequest = {}): Promise<Paged<Job>> {
    const { page, per_page, ...filter } = parseInput(jobListSchema, query);
    const window = { page, per_page };
    return paged(
      await this.deps.storage.jobs.list({ ...storagePage(window), ...definedFields(filter) }),
      window,
    );
  }

  get(id: string): Promise<Job> {
    return this.deps.storage.jobs.require(id);
  }

  /** Jobs by status, exact (the dashboard's figures). */
  countByStatus(): Promise<Record<JobStatus, number>> {
    return this.deps.storage.jobs.countByStatus();
  }

  /** Cancels an open job; a job that already ended is a `conflict`. */
  cancel(actor: Actor, id: string): Promise<Job> {
    return this.deps.storage.transaction(async (tx) => {
      // The row lock first, so a concurrent agent report cannot complete the job between our
      // check and our write.
      const job = await tx.jobs.lockForUpdate(id);
      if (!isOpen(job.status))
        throw invalidState(`job '${id}' is already ${job.status}`, { job_status: job.status });
      const now = this.deps.clock.now();
      const cancelled = await tx.jobs.update(id, {
        status: 'Cancelled',
        completed_at: now,
        locked_by: null,
        lease_expires_at: null,
      });
      await this.audit.record(
        actor,
        {
          action: 'job_cancelled',
          category: 'cert_lifecycle',
          resource_type: 'job',
          resource_id: id,
          details: { type: job.type, previous_status: job.status },
        },
        tx,
      );
      return cancelled;
    });
  }

  /**
   * The fan-out after a certificate version is issued or renewed: one Deployment job per
   * enabled, unretired target bound to the certificate, addressed to the target's agent.
   * Pass the issuance transaction as `tx` so jobs exist exactly when the version does.
   */
  async createDeploymentJobs(
    certificateId: string,
    versionId: string,
    options: { actor?: Actor; tx?: Storage } = {},
  ): Promise<Job[]> {
    const run = async (tx: Storage): Promise<Job[]> => {
      const targets = (await tx.targets.listForCertificate(certificateId)).filter((t) => t.enabled);
      const jobs: Job[] = [];
      for (const target of targets) {
        jobs.push(
          await tx.jobs.create({
            type: 'Deployment',
            certificate_id: certificateId,
            target_id: target.id,
            agent_id: target.agent_id,
            payload: { version_id: versionId, target_type: target.type },
          }),
        );
      }
      if (jobs.length > 0) {
        await this.audit.record(
          options.actor ?? SYSTEM_ACTOR,
          {
            action: 'deployment_jobs_created',
            category: 'cert_lifecycle',
            resource_type: 'certificate',
            resource_id: certificateId,
            details: { version_id: versionId, job_ids: jobs.map((j) => j.id) },
          },
          tx,
        );
      }
      return jobs;
    };
    return options.tx ? run(options.tx) : this.deps.storage.transaction(run);
  }

  /**
   * Starts verifying a deployment: a Completed Deployment job gets verification `pending` and
   * its agent a Validation job that checks the target serves the deployed certificate. A
   * deployment that failed or was cancelled has nothing to verify (`skipped`); one still open
   * is a `conflict`, as is any other job type.
   */
  requestVerification(actor: Actor, id: string): Promise<JobVerification> {
    return this.deps.storage.transaction(async (tx) => {
      const job = await tx.jobs.lockForUpdate(id);
      if (job.type !== 'Deployment')
        throw invalidState(`only Deployment jobs can be verified; '${id}' is ${job.type}`);
      if (isOpen(job.status))
        throw invalidState(`job '${id}' is still ${job.status}; verify it once it completed`);
      const now = this.deps.clock.now();
      let updated: Job;
      let validationJobId: string | null = null;
      if (job.status !== 'Completed') {
        updated = await tx.jobs.update(id, {
          verification_status: 'skipped',
          verification_detail: `the deployment ${job.status === 'Failed' ? 'failed' : 'was cancelled'}; nothing to verify`,
          verified_at: now,
        });
      } else {
        const validation = await tx.jobs.create({
          type: 'Validation',
          certificate_id: job.certificate_id,
          target_id: job.target_id,
          agent_id: job.agent_id,
          payload: {
            kind: VALIDATION_KINDS.verification,
            job_id: job.id,
            version_id: job.payload.version_id ?? null,
          },
        });
        validationJobId = validation.id;
        updated = await tx.jobs.update(id, {
          verification_status: 'pending',
          verification_detail: null,
          verified_at: null,
          result: { ...(job.result ?? {}), verification_job_id: validation.id },
        });
      }
      await this.audit.record(
        actor,
        {
          action: 'job_verification_requested',
          category: 'cert_lifecycle',
          resource_type: 'job',
          resource_id: id,
          details: { verification_status: updated.verification_status, validation_job_id: validationJobId },
        },
        tx,
      );
      return toVerification(updated);
    });
  }

  /** The verification state of a job; `not_found` when none was ever requested. */
  async getVerification(id: string): Promise<JobVerification> {
    const job = await this.deps.storage.jobs.require(id);
    if (job.verification_status === null) {
      throw new CertwrightError('not_found', `no verification has been requested for job '${id}'`);
    }
    return toVerification(job);
  }

  /**
   * Applies an agent's report to one of its own Deployment or Validation jobs. A job of
   * another agent is `not_found` (an agent learns nothing about others' work); an Issuance or
   * Renewal job is `not_permitted` whatever its status (the server completes those itself);
   * a job that already ended is `invalid_state`, which tells an agent its job was cancelled.
   */
  async reportFromAgent(agentId: string, jobId: string, input: AgentJobReport): Promise<Job> {
    const report = parseInput(agentJobReportSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      const job = await this.#lockOwnJob(tx, agentId, jobId);
      if (!AGENT_JOB_TYPES.includes(job.type)) {
        throw fail(
          'not_permitted',
          `agents report only on Deployment and Validation jobs; job '${jobId}' is ${job.type}, which takes the agent's CSR and completes on the server`,
          { extra: { job_type: job.type } },
        );
      }
      if (!isOpen(job.status))
        throw invalidState(`job '${jobId}' is already ${job.status}`, { job_status: job.status });
      const now = this.deps.clock.now();
      if (report.status === 'Running') {
        return tx.jobs.update(jobId, {
          status: 'Running',
          started_at: job.started_at ?? now,
          locked_by: agentId,
          lease_expires_at: new Date(now.getTime() + this.#settings.jobLeaseMs),
          ...(report.result ? { result: report.result } : {}),
        });
      }
      const failed = report.status === 'Failed';
      const updated = await tx.jobs.update(jobId, {
        status: report.status,
        completed_at: now,
        started_at: job.started_at ?? now,
        locked_by: null,
        lease_expires_at: null,
        last_error: failed ? (report.error ?? 'reported failed without a reason') : null,
        ...(report.result ? { result: report.result } : {}),
      });
      await this.#finishVerification(tx, updated, now);
      await this.#deploymentNotice(tx, updated);
      await this.audit.record(
        { type: 'agent', id: agentId },
        {
          action: failed ? 'job_failed' : 'job_completed',
          category: 'cert_lifecycle',
          resource_type: 'job',
          resource_id: jobId,
          details: { type: job.type, ...(failed ? { error: updated.last_error } : {}) },
        },
        tx,
      );
      return updated;
    });
  }

  /**
   * An agent's CSR for one of its AwaitingCSR jobs. The CSR must parse and carry a valid
   * signature; the job then becomes Pending for the server-side issuance pipeline.
   */
  async submitCsr(agentId: string, jobId: string, csrPem: string): Promise<Job> {
    parseInput(agentCsrSchema, { csr_pem: csrPem });
    // Parsing first (outside the transaction) rejects garbage without touching the job.
    parseCertificationRequest(csrPem);
    return this.deps.storage.transaction(async (tx) => {
      const job = await this.#lockOwnJob(tx, agentId, jobId);
      if (job.status !== 'AwaitingCSR') {
        throw invalidState(`job '${jobId}' is ${job.status}, not AwaitingCSR`, { job_status: job.status });
      }
      const updated = await tx.jobs.update(jobId, {
        status: 'Pending',
        csr_pem: csrPem,
        scheduled_at: this.deps.clock.now(),
      });
      await this.audit.record(
        { type: 'agent', id: agentId },
        {
          action: 'job_csr_submitted',
          category: 'cert_lifecycle',
          resource_type: 'job',
          resource_id: jobId,
          details: { type: job.type, certificate_id: job.certificate_id },
        },
        tx,
      );
      return updated;
    });
  }

  /**
   * The job-timeout sweep (run by a scheduler): Running jobs whose lease expired with no
   * attempts left, and AwaitingCSR jobs older than the CSR timeout, become Failed with a reason.
   * A timed-out verification job marks its deployment's verification failed. Returns the
   * failed jobs.
   */
  failTimedOutJobs(now: Date = this.deps.clock.now()): Promise<Job[]> {
    return this.deps.storage.transaction(async (tx) => {
      const failed = await tx.jobs.failExpired(now, JOB_TIMEOUT_REASONS.lease);
      const csrCutoff = now.getTime() - this.#settings.csrTimeoutMs;
      // AwaitingCSR jobs are few (one per agent-keyed certificate in flight); a page of 500
      // per sweep bounds the work, and the next sweep takes the rest.
      const awaiting = await tx.jobs.list({ status: 'AwaitingCSR', perPage: 500 });
      for (const job of awaiting.items) {
        if (job.updated_at.getTime() > csrCutoff) continue;
        failed.push(
          await tx.jobs.update(job.id, {
            status: 'Failed',
            last_error: JOB_TIMEOUT_REASONS.csr,
            completed_at: now,
          }),
        );
      }
      for (const job of failed) {
        await this.#finishVerification(tx, job, now);
        // A deployment that timed out never reached its target: the owner hears about it
        // like about a reported failure.
        await this.#deploymentNotice(tx, job);
        await this.audit.record(
          SYSTEM_ACTOR,
          {
            action: 'job_timed_out',
            category: 'cert_lifecycle',
            resource_type: 'job',
            resource_id: job.id,
            details: { type: job.type, reason: job.last_error },
          },
          tx,
        );
      }
      return failed;
    });
  }

  /** Cancels every open job of an agent (forced retirement); returns how many. */
  async cancelOpenForAgent(tx: Storage, agentId: string, at: Date): Promise<number> {
    let cancelled = 0;
    for (;;) {
      const open = await tx.jobs.list({ agent_id: agentId, status: [...OPEN_JOB_STATUSES], perPage: 500 });
      for (const job of open.items) {
        await tx.jobs.update(job.id, {
          status: 'Cancelled',
          completed_at: at,
          locked_by: null,
          lease_expires_at: null,
        });
        await this.#finishVerification(tx, { ...job, status: 'Cancelled', last_error: 'agent retired' }, at);
      }
      cancelled += open.items.length;
      if (open.items.length === 0 || open.total <= open.items.length) return cancelled;
    }
  }

  /**
   * DeploymentSuccess / DeploymentFailure to the certificate's owner when a Deployment job
   * ended Completed or Failed, in the transaction that ended it. Cancelled deployments (an
   * operator's or a retirement's decision) raise nothing.
   */
  async #deploymentNotice(tx: Storage, job: Job): Promise<void> {
    if (job.type !== 'Deployment' || !job.certificate_id) return;
    if (job.status !== 'Completed' && job.status !== 'Failed') return;
    const certificate = await tx.certificates.get(job.certificate_id);
    if (!certificate) return;
    const target = job.target_id ? await tx.targets.get(job.target_id) : null;
    const where = target ? `${target.name} (${target.id})` : 'its target';
    const version = typeof job.payload.version_id === 'string' ? job.payload.version_id : null;
    const common = [
      `Job: ${job.id}`,
      ...(job.agent_id ? [`Agent: ${job.agent_id}`] : []),
      ...(version ? [`Version: ${version}`] : []),
    ];
    if (job.status === 'Completed') {
      await this.notifications.raiseForCertificate(
        tx,
        certificate,
        'DeploymentSuccess',
        `Certificate ${certificate.name} deployed to ${target?.name ?? 'its target'}`,
        [`Certificate ${certificate.name} (${certificate.id}) was deployed to ${where}.`, ...common],
      );
    } else {
      await this.notifications.raiseForCertificate(
        tx,
        certificate,
        'DeploymentFailure',
        `Deployment of certificate ${certificate.name} to ${target?.name ?? 'its target'} failed`,
        [
          `Deployment of certificate ${certificate.name} (${certificate.id}) to ${where} failed.`,
          `Error: ${job.last_error ?? 'no reason given'}`,
          ...common,
        ],
      );
    }
  }

  async #lockOwnJob(tx: Storage, agentId: string, jobId: string): Promise<Job> {
    const job = await tx.jobs.get(jobId);
    if (!job || job.agent_id !== agentId) throw notFound('job', jobId);
    return tx.jobs.lockForUpdate(jobId);
  }

  /** When a verification job ends, its deployment job's verification ends with it. */
  async #finishVerification(tx: Storage, job: Job, now: Date): Promise<void> {
    if (job.type !== 'Validation' || job.payload.kind !== VALIDATION_KINDS.verification) return;
    const deploymentId = job.payload.job_id;
    if (typeof deploymentId !== 'string') return;
    const deployment = await tx.jobs.get(deploymentId);
    if (deployment?.verification_status !== 'pending') return;
    const ok = job.status === 'Completed';
    const detail = ok
      ? typeof job.result?.detail === 'string'
        ? job.result.detail
        : 'the target serves the deployed certificate'
      : (job.last_error ?? `verification job ${job.status.toLowerCase()}`);
    await tx.jobs.update(deploymentId, {
      verification_status: ok ? 'success' : job.status === 'Cancelled' ? 'skipped' : 'failed',
      verification_detail: detail,
      verified_at: now,
    });
  }
}

function toVerification(job: Job): JobVerification {
  const validationJobId = job.result?.verification_job_id;
  return {
    job_id: job.id,
    status: job.verification_status ?? 'pending',
    detail: job.verification_detail,
    verified_at: job.verified_at,
    validation_job_id: typeof validationJobId === 'string' ? validationJobId : null,
  };
}
