export type { MaintainedStorage, MaintenanceReport, StorageOpenOptions } from './maintained.js';
export { createPgliteStorage, type PgliteLocation } from './pglite.js';
export { PgliteDialect } from './pglite-dialect.js';
export { createPostgresStorage, type PostgresStorageOptions } from './postgres.js';
export type { PreparedStatementOptions } from './prepared.js';
