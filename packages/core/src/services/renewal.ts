import type { ManagedCertificate } from '../domain/certificate.js';
import type { RenewalPolicy } from '../domain/renewal-policy.js';
import type { ServiceDeps } from './context.js';
import type { LifecycleService } from './issuance.js';

/**
 * The renewal scan: certificates inside their policy's renewal window get a
 * Renewal job — renewed right away when the server generates keys, AwaitingCSR when an agent
 * does — and ExpirationWarning notifications go out at each alert threshold exactly once.
 *
 * Retries: a failed renewal job returns to Pending after `retry_interval_seconds` until it has
 * been tried `max_retries + 1` times; then the certificate becomes Failed (RenewalFailure).
 *
 * "Exactly once per threshold": each warning is a stored notification carrying a reference
 * line `ref: expiration-warning/<serial>/<days>`; the scan looks for it before raising one,
 * so restarts and several scans a day never repeat a warning, and a renewed certificate (new
 * serial) starts its thresholds afresh. When a scan finds several thresholds crossed at once
 * (a short-lived certificate, a long outage) it raises only the nearest one: the farther
 * ones are no longer true.
 */

const DAY = 86_400_000;
const BATCH = 200;

export interface RenewalScanReport {
  /** Certificates whose window was open and that got a Renewal job this scan. */
  renewal_jobs: number;
  /** Of those, how many wait for an agent's CSR. */
  awaiting_csr: number;
  /** Jobs the scan ran (renewed or failed) through the issuance worker. */
  jobs_run: number;
  warnings: number;
  /** Certificates due whose issuer is disabled: no job (a disabled issuer signs nothing). */
  issuer_disabled: number;
}

export const warningRef = (serial: string, threshold: number): string =>
  `ref: expiration-warning/${serial}/${threshold}`;

export class RenewalService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly lifecycle: LifecycleService,
  ) {}

  /** One scan at `now`; call it under a lease (see @certwright/server's renewal scheduler). */
  async runRenewalScan(now: Date = this.deps.clock.now()): Promise<RenewalScanReport> {
    const report: RenewalScanReport = {
      renewal_jobs: 0,
      awaiting_csr: 0,
      jobs_run: 0,
      warnings: 0,
      issuer_disabled: 0,
    };
    const { storage } = this.deps;
    const due = await storage.certificates.renewalDue({ now, limit: BATCH });
    const disabled = await this.#disabledIssuers();
    for (const certificate of due) {
      try {
        if (disabled.has(certificate.issuer_id)) {
          // A disabled issuer signs nothing: no job; expiration warnings still go out.
          report.issuer_disabled += 1;
          continue;
        }
        const job = await storage.transaction(async (tx) => {
          const [opened] = await this.lifecycle.jobOpener.openMany(tx, [certificate], 'Renewal');
          if (!opened!.created) return null; // already renewing (its retries are scheduled on the job)
          await tx.certificates.update(certificate.id, { status: 'RenewalInProgress' });
          return opened!.job;
        });
        if (!job) continue;
        report.renewal_jobs += 1;
        if (job.status === 'AwaitingCSR') report.awaiting_csr += 1;
      } catch (error) {
        this.deps.logger.warn(
          { err: error, certificate_id: certificate.id },
          'renewal scan could not open a job',
        );
      }
    }
    // Server-side renewals (and retries now due) run here rather than waiting for the worker tick.
    for (
      let n = await this.lifecycle.processDueJobs(now);
      n > 0;
      n = await this.lifecycle.processDueJobs(now)
    ) {
      report.jobs_run += n;
    }
    report.warnings = await this.#raiseWarnings(now);
    if (report.renewal_jobs || report.warnings || report.jobs_run) {
      this.deps.logger.info({ ...report }, 'renewal scan');
    }
    return report;
  }

  async #disabledIssuers(): Promise<Set<string>> {
    const ids = new Set<string>();
    for (let page = 1; ; page += 1) {
      const result = await this.deps.storage.issuers.list({ enabled: false, page, perPage: BATCH });
      for (const i of result.items) ids.add(i.id);
      if (result.items.length < BATCH) return ids;
    }
  }

  async #policies(): Promise<RenewalPolicy[]> {
    const out: RenewalPolicy[] = [];
    for (let page = 1; ; page += 1) {
      const result = await this.deps.storage.renewalPolicies.list({ page, perPage: BATCH });
      out.push(...result.items);
      if (result.items.length < BATCH) return out;
    }
  }

  async #raiseWarnings(now: Date): Promise<number> {
    let raised = 0;
    for (const policy of await this.#policies()) {
      const thresholds = [...new Set(policy.alert_thresholds_days)].sort((a, b) => a - b);
      if (thresholds.length === 0) continue;
      const horizon = new Date(now.getTime() + (thresholds[thresholds.length - 1]! + 1) * DAY);
      for (let page = 1; ; page += 1) {
        const result = await this.deps.storage.certificates.list({
          renewal_policy_id: policy.id,
          status: ['Active', 'Expiring', 'RenewalInProgress', 'Failed'],
          expiresBefore: horizon,
          page,
          perPage: BATCH,
        });
        for (const certificate of result.items) {
          if (await this.#warnOnce(certificate, thresholds, now)) raised += 1;
        }
        if (result.items.length < BATCH) break;
      }
    }
    return raised;
  }

  async #warnOnce(certificate: ManagedCertificate, thresholds: number[], now: Date): Promise<boolean> {
    if (!certificate.current_version_id || !certificate.expires_at) return false;
    const daysLeft = Math.floor((certificate.expires_at.getTime() - now.getTime()) / DAY);
    const threshold = thresholds.find((t) => daysLeft <= t);
    if (threshold === undefined) return false;
    const { storage } = this.deps;
    const version = await storage.versions.get(certificate.current_version_id);
    if (!version) return false;
    const ref = warningRef(version.serial_number, threshold);
    return storage.transaction(async (tx) => {
      const earlier = await tx.notifications.list({
        certificate_id: certificate.id,
        type: 'ExpirationWarning',
        perPage: 500,
      });
      if (earlier.items.some((n) => n.message.includes(ref))) return false;
      const when =
        daysLeft < 0 ? 'has expired' : daysLeft === 0 ? 'expires today' : `expires in ${daysLeft} day(s)`;
      await this.lifecycle.expirationWarning(tx, certificate, `Certificate ${certificate.name} ${when}`, [
        `Certificate ${certificate.name} (${certificate.id}, ${certificate.common_name}) ${when}: not after ${certificate.expires_at!.toISOString()}.`,
        `Alert threshold: ${threshold} day(s).`,
        ref,
      ]);
      return true;
    });
  }
}
