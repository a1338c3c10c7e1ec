import type { ManagedCertificate } from '../../domain/certificate.js';
import { type Job, OPEN_JOB_STATUSES } from '../../domain/job.js';
import type { KeyGenerationMode } from '../../domain/profile.js';
import { notFound } from '../../errors.js';
import type { NewJob, Storage } from '../../ports/storage.js';
import type { ServiceDeps } from '../context.js';

/**
 * The one way an Issuance or Renewal job is opened — by a create, `POST …/issue|renew`, the
 * issuance worker, the renewal scan and bulk renewal alike:
 *
 * - a certificate with an open job of that type gets that job back, never a second one;
 * - `AwaitingCSR` when the certificate's profile generates keys on the agent, addressed to the
 *   agent of its first enabled target (so that agent's work poll offers it), else `Pending`;
 * - `max_attempts` from the renewal policy (`max_retries + 1`, 3 when unset).
 */

/** Without a renewal policy max_retries, a failing job is tried this many times in all. */
export const DEFAULT_ATTEMPTS = 3;
/** How long a synchronous issue/renew holds the job it runs. */
export const JOB_LEASE_MS = 5 * 60_000;

/** Up to this many certificates, open jobs are looked up one certificate at a time. */
const PER_CERTIFICATE_LOOKUPS = 20;

export type IssuanceJobType = 'Issuance' | 'Renewal';

export interface OpenJobOptions {
  /** `Running`: claimed at once by this process for a synchronous run (server-side keys only). */
  status?: 'Running';
  /** Merged into the job's payload (e.g. `{ trigger: 'bulk_renew' }`). */
  payload?: Record<string, unknown>;
  /**
   * The open jobs of the type by certificate id, read by the caller with {@link
   * IssuanceJobOpener.openJobsByCertificate} in the same transaction (a bulk call reads them
   * once, not once per batch).
   */
  openJobs?: ReadonlyMap<string, Job>;
}

export interface OpenedJob {
  job: Job;
  /** False when the certificate already had an open job of that type. */
  created: boolean;
}

export class IssuanceJobOpener {
  constructor(
    private readonly deps: ServiceDeps,
    /** Written to `locked_by` of the jobs this process claims. */
    readonly workerId: string,
  ) {}

  /** Opens (or returns the open) job for one certificate inside `tx`. */
  async open(
    tx: Storage,
    certificateId: string,
    type: IssuanceJobType,
    options: OpenJobOptions = {},
  ): Promise<Job> {
    const certificate = await tx.certificates.get(certificateId);
    if (!certificate) throw notFound('certificate', certificateId);
    return (await this.openMany(tx, [certificate], type, options))[0]!.job;
  }

  /**
   * Opens jobs for many certificates inside `tx`, in input order; the new ones are written with
   * one statement. Profiles and renewal policies are read once per id.
   */
  async openMany(
    tx: Storage,
    certificates: readonly ManagedCertificate[],
    type: IssuanceJobType,
    options: OpenJobOptions = {},
  ): Promise<OpenedJob[]> {
    const modes = new Map<string, KeyGenerationMode>();
    const attempts = new Map<string, number>();
    const now = this.deps.clock.now();
    const out: (OpenedJob | NewJob)[] = [];
    const openJobs = options.openJobs ?? (await this.#openJobs(tx, certificates, type));
    for (const certificate of certificates) {
      const open = openJobs.get(certificate.id);
      if (open) {
        out.push({ job: open, created: false });
        continue;
      }
      const agentMode = (await this.#mode(tx, certificate, modes)) === 'agent';
      const targets = agentMode ? await tx.targets.listForCertificate(certificate.id) : [];
      const running = options.status === 'Running' && !agentMode;
      out.push({
        type,
        certificate_id: certificate.id,
        agent_id: targets.find((t) => t.enabled)?.agent_id ?? null,
        status: agentMode ? 'AwaitingCSR' : running ? 'Running' : 'Pending',
        max_attempts: await this.#maxAttempts(tx, certificate, attempts),
        scheduled_at: now,
        payload: { key_generation: agentMode ? 'agent' : 'server', ...options.payload },
        ...(running
          ? {
              attempts: 1,
              started_at: now,
              locked_by: this.workerId,
              lease_expires_at: new Date(now.getTime() + JOB_LEASE_MS),
            }
          : {}),
      } as NewJob);
    }
    const fresh = out.filter((o): o is NewJob => !('job' in o));
    const created = fresh.length > 0 ? await tx.jobs.createMany(fresh) : [];
    let next = 0;
    return out.map((o) => ('job' in o ? o : { job: created[next++]!, created: true }));
  }

  /**
   * The open jobs of `type` of these certificates. A few certificates: one query each; many
   * (bulk renewal): every open job of the type, read once a page at a time — open jobs are far
   * fewer than certificates, and one query per certificate made a 10,000-certificate bulk
   * renewal take minutes.
   */
  async #openJobs(
    tx: Storage,
    certificates: readonly ManagedCertificate[],
    type: IssuanceJobType,
  ): Promise<Map<string, Job>> {
    const found = new Map<string, Job>();
    const status = [...OPEN_JOB_STATUSES];
    if (certificates.length <= PER_CERTIFICATE_LOOKUPS) {
      for (const c of certificates) {
        const open = await tx.jobs.list({ certificate_id: c.id, type, status, perPage: 1 });
        if (open.items[0]) found.set(c.id, open.items[0]);
      }
      return found;
    }
    return this.openJobsByCertificate(tx, type);
  }

  /** Every open job of `type`, by certificate id (the oldest one when a certificate has several). */
  async openJobsByCertificate(tx: Storage, type: IssuanceJobType): Promise<Map<string, Job>> {
    const found = new Map<string, Job>();
    const status = [...OPEN_JOB_STATUSES];
    for (let page = 1; ; page += 1) {
      const result = await tx.jobs.list({ type, status, page, perPage: 500 });
      for (const job of result.items) {
        if (job.certificate_id && !found.has(job.certificate_id)) found.set(job.certificate_id, job);
      }
      if (result.items.length < 500) return found;
    }
  }

  async #mode(
    tx: Storage,
    certificate: ManagedCertificate,
    cache: Map<string, KeyGenerationMode>,
  ): Promise<KeyGenerationMode> {
    if (certificate.profile_id === null) return 'server';
    let mode = cache.get(certificate.profile_id);
    if (mode === undefined) {
      mode = (await tx.profiles.get(certificate.profile_id))?.key_generation ?? 'server';
      cache.set(certificate.profile_id, mode);
    }
    return mode;
  }

  async #maxAttempts(
    tx: Storage,
    certificate: ManagedCertificate,
    cache: Map<string, number>,
  ): Promise<number> {
    let n = cache.get(certificate.renewal_policy_id);
    if (n === undefined) {
      const policy = await tx.renewalPolicies.get(certificate.renewal_policy_id);
      n =
        policy?.max_retries === null || policy?.max_retries === undefined
          ? DEFAULT_ATTEMPTS
          : policy.max_retries + 1;
      cache.set(certificate.renewal_policy_id, n);
    }
    return n;
  }
}
