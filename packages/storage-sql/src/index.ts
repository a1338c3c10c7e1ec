export { translateDriverError, withErrorTranslation } from './errors.js';
export {
  appliedMigrations,
  MIGRATIONS,
  type MigrateResult,
  type Migration,
  migrate,
} from './migrations/index.js';
export { SqlQueue } from './queue.js';
export type { Database, Flavor } from './schema.js';
export { DEFAULT_PROFILE_ID, seedBaseline } from './seed.js';
export { createSqlStorage, type SqlStorage, type SqlStorageOptions } from './sql-storage.js';
