import type { EphemeralStore, Logger, Services } from '@certwright/core';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/**
 * Removes sessions past their idle or absolute end every SVC_SESSION_GC_INTERVAL. Ended
 * sessions are refused whether or not they were swept; the sweep only keeps the table small.
 */
export function startSessionGc(options: {
  services: Services;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  intervalMs: number;
}): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:session-gc',
    holder: options.holder,
    intervalMs: options.intervalMs,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: () => options.services.sessions.gc(),
  });
}
