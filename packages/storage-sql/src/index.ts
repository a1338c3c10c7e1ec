export * from './backup/index.js';
export { translateDriverError, withErrorTranslation } from './errors.js';
export {
  AUDIT_CHAIN_KEY_NAME,
  KEY_CHECK_CONTEXT,
  KEY_CHECK_ID,
  KEY_ROW_PREFIX,
  keyRowContext,
  loadAuditChainKey,
  prepareKeyring,
  readKeyring,
  SEALED_FORMAT_NAME,
} from './keyring.js';
export {
  appliedMigrations,
  MIGRATIONS,
  type MigrateResult,
  type Migration,
  migrate,
} from './migrations/index.js';
export { SqlQueue } from './queue.js';
export {
  countRemaining,
  type RekeyFailure,
  type RekeyOptions,
  type RekeyProgress,
  type RekeyResult,
  readProgress as readRekeyProgress,
} from './rekey.js';
export { sealAuditHead } from './repos/audit.js';
export type { Database, Flavor } from './schema.js';
export { SEALED_TABLES, type SealedTable } from './sealed-columns.js';
export {
  DEFAULT_ISSUER_ID,
  DEFAULT_OWNER_ID,
  DEFAULT_PROFILE_ID,
  DEFAULT_TEAM_ID,
  seedBaseline,
} from './seed.js';
export { createSqlStorage, type SqlStorage, type SqlStorageOptions } from './sql-storage.js';
