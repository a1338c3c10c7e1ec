import { z } from 'zod';
import type { CertificateVersion, ManagedCertificate } from '../domain/certificate.js';
import type { Job } from '../domain/job.js';
import { OPEN_JOB_STATUSES } from '../domain/job.js';
import type { CertificateProfile } from '../domain/profile.js';
import type { RenewalPolicy } from '../domain/renewal-policy.js';
import { CertwrightError, fail, isCertwrightError, notFound, publicMessage } from '../errors.js';
import type { IssueRequest, IssuerConnectorRegistry } from '../issuers/connector.js';
import { defaultIssuerConnectors } from '../issuers/index.js';
import { parseCertificationRequest } from '../pki/csr.js';
import {
  describePublicKey,
  generateKeyPair,
  importPkcs8Pem,
  KEY_ALGORITHMS,
  type KeyAlgorithm,
  type KeyPair,
  type PublicKeyDescription,
} from '../pki/keys.js';
import type { ExtendedKeyUsage } from '../pki/oids.js';
import { pemDecodeCertificates } from '../pki/pem.js';
import { exportPkcs12 } from '../pki/pkcs12.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import { sanKey, subjectAltNamesOf } from './certificate-names.js';
import { type Actor, type ServiceDeps, SYSTEM_ACTOR } from './context.js';
import { parseInput } from './input.js';
import { IssuerConnectorCache } from './issuance/connector-cache.js';
import {
  checkCsrAgainstProfile,
  DEFAULT_EKUS,
  refuse,
  serverKeyAlgorithm,
} from './issuance/profile-rules.js';
import { CertificateSigner, type IssuanceHooks, type SigningMaterial } from './issuance/signing.js';
import type { JobService } from './jobs.js';
import type { NotificationService } from './notifications.js';
import type { PolicyEvaluationService } from './policies.js';

export { subjectAltNamesOf } from './certificate-names.js';
export { IssuerConnectorCache } from './issuance/connector-cache.js';
export type { IssuanceHooks } from './issuance/signing.js';

/**
 * The issuing pipeline: issuance and renewal of managed certificates through their issuer's
 * connector, with profile rules enforced, and export of what was issued.
 *
 * Crash safety: the CA signs first, outside any transaction; the version, the status change,
 * the job's completion, deployment jobs and the audit event are then written in ONE
 * transaction. A crash before the commit leaves no version (the signed certificate was never
 * published anywhere); a crash after it leaves a complete one.
 */

const DAY = 86_400_000;
/** Without a profile: 90 days, the validity most public CAs now aim for. */
const DEFAULT_VALIDITY_DAYS = 90;
/** Without a renewal policy max_retries, a failing job is tried this many times in all. */
const DEFAULT_ATTEMPTS = 3;
const JOB_LEASE_MS = 5 * 60_000;

export const issueRequestSchema = z.object({
  csr_pem: z
    .string()
    .min(1)
    .max(200_000)
    .optional()
    .describe('PKCS#10 PEM; absent → the server generates the key'),
  key_algorithm: z
    .enum(KEY_ALGORITHMS as [KeyAlgorithm, ...KeyAlgorithm[]])
    .optional()
    .describe('server-side key generation; default the first algorithm the profile allows, else ECDSA-P256'),
  validity_days: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .optional()
    .describe("default the profile's max_validity_days, else 90"),
});
export type IssueInput = z.input<typeof issueRequestSchema>;

export const exportFormatSchema = z.enum(['pem', 'der']);
export const pkcs12ExportSchema = z.object({
  format: z.literal('pkcs12'),
  password: z
    .string()
    .min(8)
    .max(1024)
    .describe('encrypts the PKCS#12 file (at least 8 characters); never stored or logged'),
});

export interface LifecycleOptions {
  /** External base URL (`https://pki.example.com:8443`) written into CDP and AIA OCSP extensions. */
  publicBaseUrl?: string;
  connectors?: IssuerConnectorRegistry;
  hooks?: IssuanceHooks;
}

export interface IssueOutcome {
  certificate: ManagedCertificate;
  job: Job;
  /** Absent while the job waits for an agent's CSR (AwaitingCSR). */
  version?: CertificateVersion;
}

export interface ExportedFile {
  body: Buffer;
  contentType: string;
  filename: string;
}

export class LifecycleService {
  readonly connectors: IssuerConnectorCache;
  readonly signer: CertificateSigner;
  readonly #worker = `lifecycle-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

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
    this.signer = new CertificateSigner(deps, this.connectors, options.hooks);
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

  async #maxAttempts(certificate: ManagedCertificate, tx: Storage): Promise<number> {
    const policy = await tx.renewalPolicies.get(certificate.renewal_policy_id);
    return policy?.max_retries === null || policy?.max_retries === undefined
      ? DEFAULT_ATTEMPTS
      : policy.max_retries + 1;
  }

  /**
   * Checks a caller's CSR and the issuance parameters against the profile; returns the
   * request for the connector. Throws `validation_failed` (400) with a reason; nothing is
   * issued or stored on refusal.
   */
  async #prepare(
    certificate: ManagedCertificate,
    profile: CertificateProfile | null,
    input: { csrPem?: string | null; keyAlgorithm?: KeyAlgorithm; validityDays?: number },
  ): Promise<SigningMaterial> {
    const now = this.deps.clock.now();
    const maxDays = profile?.max_validity_days;
    const days = input.validityDays ?? maxDays ?? DEFAULT_VALIDITY_DAYS;
    if (maxDays !== undefined && days > maxDays) {
      throw refuse(
        'validity_days',
        `${days} days exceeds the profile maximum of ${maxDays} days`,
        'validity_not_allowed',
      );
    }
    const sans = subjectAltNamesOf(certificate);
    const cn = certificate.common_name.trim();
    const subject = cn.length <= 64 ? [{ type: 'CN', value: cn }] : [];
    let ekus: ExtendedKeyUsage[] = profile?.allowed_ekus.length
      ? [...profile.allowed_ekus]
      : [...DEFAULT_EKUS];
    let key: PublicKeyDescription;
    let publicKey: IssueRequest['publicKey'];
    let keyPair: KeyPair | undefined;
    let csrPem: string | null = null;

    if (input.csrPem) {
      const csr = parseCertificationRequest(input.csrPem); // verifies the signature, bounds the DER
      ekus = checkCsrAgainstProfile(profile, csr);
      key = csr.publicKey;
      const allowedNames = new Set(sans.map(sanKey));
      const foreign = csr.subjectAltNames.filter((s) => s.type === 'other' || !allowedNames.has(sanKey(s)));
      if (foreign.length) {
        throw refuse(
          'csr',
          `the request names ${foreign.map((s) => (s.type === 'other' ? 'an unsupported name form' : `${s.type}:${s.value}`)).join(', ')}, which certificate '${certificate.id}' does not carry`,
          'names_mismatch',
        );
      }
      publicKey = csr.spki;
      csrPem = input.csrPem;
    } else {
      const algorithm = serverKeyAlgorithm(profile, input.keyAlgorithm);
      keyPair = await generateKeyPair(algorithm);
      key = describePublicKey(keyPair.publicKey);
      publicKey = keyPair.publicKey;
    }
    if (subject.length === 0 && sans.length === 0) {
      throw refuse(
        'common_name',
        'the certificate has no name that fits a certificate (common name over 64 characters and no SANs)',
        'name_rejected',
      );
    }
    return {
      request: {
        subject,
        subjectAltNames: sans,
        publicKey,
        notBefore: new Date(now.getTime() - 60_000), // tolerate relying parties' clock skew
        notAfter: new Date(now.getTime() + days * DAY),
        extendedKeyUsage: ekus,
        mustStaple: profile?.must_staple ?? false,
      },
      commonName: subject.length > 0 ? cn : null,
      ...(keyPair ? { keyPair } : {}),
      csrPem,
      key,
    };
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
    return this.deps.storage.transaction(async (tx) => {
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
    this.deps.logger.warn(
      { err: error, job_id: job.id, certificate_id: certificate.id, attempt: job.attempts },
      `${job.type === 'Renewal' ? 'renewal' : 'issuance'} attempt failed`,
    );
    const now = this.deps.clock.now();
    return this.deps.storage.transaction(async (tx) => {
      const policy = await tx.renewalPolicies.get(certificate.renewal_policy_id);
      const retry =
        job.attempts < job.max_attempts && !(isCertwrightError(error) && error.code === 'validation_failed');
      const updated = await tx.jobs.update(job.id, {
        status: retry ? 'Pending' : 'Failed',
        last_error: message,
        locked_by: null,
        lease_expires_at: null,
        ...(retry
          ? { scheduled_at: new Date(now.getTime() + (policy?.retry_interval_seconds ?? 3600) * 1000) }
          : { completed_at: now }),
      });
      if (!retry) {
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
  }

  /**
   * Opens an Issuance or Renewal job for a certificate inside the caller's transaction:
   * AwaitingCSR when its profile generates keys on the agent, otherwise Pending (the job
   * worker or a synchronous caller runs it). Returns the open job if one exists already.
   */
  async openJob(
    certificateId: string,
    type: 'Issuance' | 'Renewal',
    tx: Storage = this.deps.storage,
    options: { status?: 'Running' } = {},
  ): Promise<Job> {
    const certificate = await this.#certificate(certificateId, tx);
    const open = await tx.jobs.list({
      certificate_id: certificateId,
      type,
      status: [...OPEN_JOB_STATUSES],
      perPage: 1,
    });
    if (open.items[0]) return open.items[0];
    const profile = await this.#profile(certificate, tx);
    const agentMode = profile?.key_generation === 'agent';
    const targets = agentMode ? await tx.targets.listForCertificate(certificateId) : [];
    const now = this.deps.clock.now();
    return tx.jobs.create({
      type,
      certificate_id: certificateId,
      agent_id: targets.find((t) => t.enabled)?.agent_id ?? null,
      status: agentMode ? 'AwaitingCSR' : (options.status ?? 'Pending'),
      max_attempts: await this.#maxAttempts(certificate, tx),
      scheduled_at: now,
      payload: { key_generation: agentMode ? 'agent' : 'server' },
      ...(options.status === 'Running' && !agentMode
        ? {
            attempts: 1,
            started_at: now,
            locked_by: this.#worker,
            lease_expires_at: new Date(now.getTime() + JOB_LEASE_MS),
          }
        : {}),
    });
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
    const allowed =
      kind === 'issue'
        ? ['Pending', 'Failed']
        : ['Active', 'Expiring', 'Expired', 'Failed', 'RenewalInProgress'];
    if (!allowed.includes(certificate.status)) {
      throw fail(
        'invalid_state',
        `certificate '${certificateId}' is ${certificate.status}; ${kind === 'issue' ? 'issue needs Pending or Failed (use renew for an issued certificate)' : `renew needs one of ${allowed.join(', ')}`}`,
        { extra: { resource: 'certificate', id: certificateId, certificate_status: certificate.status } },
      );
    }
    if (kind === 'issue' && certificate.current_version_id && certificate.status !== 'Failed') {
      throw fail('invalid_state', `certificate '${certificateId}' is already issued; renew it instead`);
    }
    await this.connectors.require(certificate.issuer_id); // unsupported issuer types fail before any job exists
    const profile = await this.#profile(certificate);
    if (profile?.key_generation === 'agent' && !data.csr_pem) {
      // The agent generates the key: the job waits for its CSR.
      const job = await this.deps.storage.transaction(async (tx) => {
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
      const open = await tx.jobs.list({
        certificate_id: certificateId,
        type,
        status: [...OPEN_JOB_STATUSES],
        perPage: 1,
      });
      const existing = open.items[0];
      const now = this.deps.clock.now();
      if (kind === 'renew') await tx.certificates.update(certificateId, { status: 'RenewalInProgress' });
      if (existing) {
        return tx.jobs.update(existing.id, {
          status: 'Running',
          attempts: existing.attempts + 1,
          started_at: now,
          locked_by: this.#worker,
          lease_expires_at: new Date(now.getTime() + JOB_LEASE_MS),
        });
      }
      return this.openJob(certificateId, type, tx, { status: 'Running' });
    });
    try {
      return await this.#signAndStore(job, certificate, material, kind, actor);
    } catch (error) {
      await this.#fail({ ...job, max_attempts: job.attempts }, certificate, error, actor);
      throw error;
    }
  }

  /** Issues the first version (POST /certificates/{id}/issue). */
  issue(certificateId: string, input: IssueInput, actor: Actor): Promise<IssueOutcome> {
    return this.#run(certificateId, 'issue', input, actor);
  }

  /** Renews: a new version with a new serial (POST /certificates/{id}/renew). */
  renew(certificateId: string, input: IssueInput, actor: Actor): Promise<IssueOutcome> {
    return this.#run(certificateId, 'renew', input, actor);
  }

  /**
   * Runs one claimed Issuance/Renewal job: server-side key generation, or the CSR the agent
   * submitted (`job.csr_pem`). Failures are recorded on the job (retry or Failed).
   */
  async runJob(job: Job, actor: Actor = SYSTEM_ACTOR): Promise<IssueOutcome | null> {
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
      worker: this.#worker,
      leaseMs: JOB_LEASE_MS,
      limit,
      types: ['Issuance', 'Renewal'],
    });
    for (const job of jobs) await this.runJob(job);
    return jobs.length;
  }

  // -------------------------------------------------------------------------------------------
  // Export

  async #latest(certificateId: string): Promise<CertificateVersion> {
    await this.#certificate(certificateId);
    const v = await this.deps.storage.versions.latest(certificateId);
    if (!v) {
      throw new CertwrightError('not_found', `certificate '${certificateId}' has no issued version yet`, {
        extra: { resource: 'certificate version', certificate_id: certificateId },
      });
    }
    return v;
  }

  /** PEM: the certificate followed by its CA chain; DER: the certificate alone. No key. */
  async export(certificateId: string, format: 'pem' | 'der'): Promise<ExportedFile> {
    const v = await this.#latest(certificateId);
    if (format === 'der') {
      return {
        body: pemDecodeCertificates(v.cert_pem)[0]!,
        contentType: 'application/pkix-cert',
        filename: `${certificateId}.cer`,
      };
    }
    return {
      body: Buffer.from(v.cert_pem + v.chain_pem),
      contentType: 'application/x-pem-file',
      filename: `${certificateId}.pem`,
    };
  }

  /**
   * PKCS#12 with key, certificate and chain, encrypted under the caller's password. Only when
   * the server holds the key (server-side generation); an audit event records who exported.
   */
  async exportPkcs12(
    certificateId: string,
    input: z.input<typeof pkcs12ExportSchema>,
    actor: Actor,
  ): Promise<ExportedFile> {
    const data = parseInput(pkcs12ExportSchema, input);
    const latest = await this.#latest(certificateId);
    const v = await this.deps.storage.versions.getWithKey(latest.id);
    if (!v?.private_key_pem) {
      throw fail(
        'invalid_state',
        `certificate '${certificateId}' has no private key on the server (its key was generated by the requester); only PEM and DER exports are possible`,
        { extra: { resource: 'certificate', id: certificateId } },
      );
    }
    const body = exportPkcs12({
      privateKey: importPkcs8Pem(v.private_key_pem),
      certificate: pemDecodeCertificates(v.cert_pem)[0]!,
      chain: pemDecodeCertificates(v.chain_pem),
      password: data.password,
    });
    await this.audit.record(actor, {
      action: 'certificate_exported',
      category: 'cert_lifecycle',
      resource_type: 'certificate',
      resource_id: certificateId,
      details: { format: 'pkcs12', version_id: v.id, serial_number: v.serial_number },
    });
    return { body, contentType: 'application/x-pkcs12', filename: `${certificateId}.p12` };
  }

  /** The CA chain of an issuer (PEM, issuing CA first). */
  async caChain(issuerId: string): Promise<string[]> {
    return (await this.connectors.require(issuerId)).caChain();
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
