export {
  BACKUP_CHECK_EVERY_MS,
  backupFileName,
  listBackups,
  type ScheduledBackupOptions,
  startScheduledBackups,
  takenAt,
} from './backup.js';
export { CRL_REFRESH_INTERVAL_MS, refreshCrls, startCrlRefresh } from './crl-refresh.js';
export {
  DISCOVERY_SCAN_INTERVAL_MS,
  ENDPOINT_HEALTH_INTERVAL_MS,
  STALE_SCAN_MS,
  startDiscoveryScans,
  startEndpointHealth,
} from './discovery.js';
export { JOB_TIMEOUT_INTERVAL_MS, startJobTimeouts } from './job-timeouts.js';
export {
  type LeasedTask,
  type LeasedTaskOptions,
  type SchedulerTick,
  startLeasedTask,
  type TickObserver,
} from './lease-runner.js';
export { startNotificationRetry } from './notification-retry.js';
export { REKEY_INTERVAL_MS, startRekeyJob } from './rekey.js';
export {
  ISSUANCE_INTERVAL_MS,
  RENEWAL_SCAN_INTERVAL_MS,
  startIssuanceWorker,
  startRenewalScan,
} from './renewal.js';
export { startSessionGc } from './session-gc.js';
export { STORAGE_MAINTENANCE_INTERVAL_MS, startStorageMaintenance } from './storage-maintenance.js';
