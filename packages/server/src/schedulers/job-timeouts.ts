import type { EphemeralStore, Logger, Services } from '@certwright/core';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/** Default tick of the job-timeout sweep. */
export const JOB_TIMEOUT_INTERVAL_MS = 60_000;

/**
 * Fails stuck jobs (expired agent leases with no attempts left, CSR waits past
 * SVC_AGENT_CSR_TIMEOUT) with a reason. One instance per tick.
 */
export function startJobTimeouts(options: {
  services: Services;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  intervalMs?: number;
}): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:job-timeouts',
    holder: options.holder,
    intervalMs: options.intervalMs ?? JOB_TIMEOUT_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: async () => ({ failed: (await options.services.jobs.failTimedOutJobs()).length }),
  });
}
