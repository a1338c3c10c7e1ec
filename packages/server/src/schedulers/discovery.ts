import { type EphemeralStore, type Logger, type Services, SYSTEM_ACTOR } from '@certwright/core';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/** Endpoint health tick: every enabled check whose interval elapsed is checked (60 s). */
export const ENDPOINT_HEALTH_INTERVAL_MS = 60_000;
/** Scheduled network scans are looked for once a minute. */
export const DISCOVERY_SCAN_INTERVAL_MS = 60_000;
/**
 * A scan still `running` after this long lost its scanner (a crash or a restart): marked
 * failed. The longest scan a target allows (65,536 endpoints, all hanging, 64 at a time with
 * 5 s each) takes about 85 minutes.
 */
export const STALE_SCAN_MS = 3 * 60 * 60_000;

interface Scheduled {
  services: Services;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  intervalMs?: number;
}

/** The endpoint health monitor: one instance per tick checks what is due (docs/api/discovery.md). */
export function startEndpointHealth(options: Scheduled): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:endpoint-health',
    holder: options.holder,
    intervalMs: options.intervalMs ?? ENDPOINT_HEALTH_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: () => options.services.healthChecks.tick(),
  });
}

/** Scheduled scans of targets with an interval, and the sweep of scans whose scanner died. */
export function startDiscoveryScans(options: Scheduled): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:discovery-scans',
    holder: options.holder,
    intervalMs: options.intervalMs ?? DISCOVERY_SCAN_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: async () => {
      const failed = await options.services.discovery.failStaleScans(STALE_SCAN_MS);
      const scans = await options.services.discovery.runDueScans(SYSTEM_ACTOR);
      return { failed_stale: failed, scanned: scans.length };
    },
  });
}
