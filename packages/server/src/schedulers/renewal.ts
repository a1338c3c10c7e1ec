import type { EphemeralStore, Logger, Services } from '@certwright/core';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/** Default tick of the renewal scan (windows are in days; minutes of latency are fine). */
export const RENEWAL_SCAN_INTERVAL_MS = 5 * 60_000;
/**
 * Default tick of the issuance worker: certificates created through the API are issued within
 * about this long (their Issuance job is opened and run here), and agent CSRs are turned into
 * certificates.
 */
export const ISSUANCE_INTERVAL_MS = 2_000;

interface SchedulerOptions {
  services: Services;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  intervalMs?: number;
}

/**
 * The renewal scan (`services.pki.renewal.runRenewalScan`): renews certificates whose renewal
 * window opened (server keys) or opens AwaitingCSR jobs (agent keys), and raises each expiration
 * alert threshold once. One instance per tick.
 */
export function startRenewalScan(options: SchedulerOptions): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:renewal-scan',
    holder: options.holder,
    intervalMs: options.intervalMs ?? RENEWAL_SCAN_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: () => options.services.pki.renewal.runRenewalScan(),
  });
}

/**
 * The issuance worker (`services.pki.lifecycle.processDueJobs`): opens Issuance jobs for new
 * Pending certificates and runs due Issuance/Renewal jobs (retries included). Jobs are claimed
 * with row locks, but opening jobs is not idempotent across instances, so it runs under a
 * lease too.
 */
export function startIssuanceWorker(options: SchedulerOptions): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:issuance',
    holder: options.holder,
    intervalMs: options.intervalMs ?? ISSUANCE_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: async () => ({ jobs: await options.services.pki.lifecycle.processDueJobs() }),
  });
}
