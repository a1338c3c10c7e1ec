export { translateDriverError, withErrorTranslation } from './errors.js';
export {
  appliedMigrations,
  MIGRATIONS,
  type MigrateResult,
  type Migration,
  migrate,
} from './migrations/index.js';
export { SqlQueue } from './queue.js';
export { sealAuditHead } from './repos/audit.js';
export type { Database, Flavor } from './schema.js';
export {
  DEFAULT_ISSUER_ID,
  DEFAULT_OWNER_ID,
  DEFAULT_PROFILE_ID,
  DEFAULT_TEAM_ID,
  seedBaseline,
} from './seed.js';
export { createSqlStorage, type SqlStorage, type SqlStorageOptions } from './sql-storage.js';
