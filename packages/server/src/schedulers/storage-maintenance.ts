import type { EphemeralStore, Logger } from '@certwright/core';
import type { MaintenanceReport } from '@certwright/storage-pg';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/**
 * Default tick of storage maintenance. Statistics only need to follow the data's shape, which
 * bulk loads change at once and normal traffic slowly: hourly bounds how long a freshly
 * bulk-loaded embedded database runs on stale plans, at about a second of ANALYZE per hour.
 */
export const STORAGE_MAINTENANCE_INTERVAL_MS = 60 * 60_000;

/**
 * Runs the storage's routine maintenance (PGlite: ANALYZE, which autovacuum does elsewhere;
 * a no-op on PostgreSQL and MySQL/MariaDB). One instance per tick.
 */
export function startStorageMaintenance(options: {
  maintain: () => Promise<MaintenanceReport>;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  intervalMs?: number;
}): LeasedTask {
  return startLeasedTask({
    name: 'scheduler:storage-maintenance',
    holder: options.holder,
    intervalMs: options.intervalMs ?? STORAGE_MAINTENANCE_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: () => options.maintain(),
  });
}
