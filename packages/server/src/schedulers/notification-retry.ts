import type { EphemeralStore, Logger, Services } from '@certwright/core';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/**
 * The notification loop: every SVC_NOTIFICATION_RETRY_INTERVAL (default 2m),
 * delivers pending events and retries failed ones that are due. One instance per tick.
 */
export function startNotificationRetry(options: {
  services: Services;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  intervalMs: number;
  holder: string;
}): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:notification-retry',
    holder: options.holder,
    intervalMs: options.intervalMs,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: () => options.services.notifications.sweep(),
  });
}
