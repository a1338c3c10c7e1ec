import type { Clock, Logger, SecretBox } from '@certwright/core';
import type { SqlStorage } from '@certwright/storage-sql';

/** What one `maintain()` pass did. */
export interface MaintenanceReport {
  /** Whether planner statistics were refreshed (false: the engine does it itself). */
  analyzed: boolean;
  /** Wall time of the pass in milliseconds. */
  durationMs: number;
}

/**
 * SQL storage with the routine maintenance an engine without autovacuum needs. The server runs
 * `maintain()` periodically under a lease (scheduler `storage-maintenance`).
 */
export interface MaintainedStorage extends SqlStorage {
  /**
   * PGlite: `ANALYZE` of the whole database, so the planner has statistics after bulk loads
   * (PGlite runs no autovacuum daemon). PostgreSQL: a no-op — autovacuum analyzes on its own.
   */
  maintain(): Promise<MaintenanceReport>;
}

export interface StorageOpenOptions {
  /** Seals secrets at rest (issuer/target config, webhook headers, private keys). */
  secretBox: SecretBox;
  clock?: Clock;
  logger?: Logger;
}
