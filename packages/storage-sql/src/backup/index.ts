export {
  BACKUP_FORMAT,
  type BackupEvent,
  type BackupManifest,
  type BackupPart,
  lines,
  readBackup,
} from './format.js';
export { type ColumnKind, describeTables, type TableShape } from './introspect.js';
export {
  checkSchemaVersion,
  checkTargetEmpty,
  nonEmptyTables,
  type RestoreOptions,
  type RestoreRefusal,
  type RestoreResult,
  restoreBackup,
  restoreRefusalOf,
  restoreRefused,
  verifyBackup,
} from './restore.js';
export { type BackupMeta, type BackupSink, writeBackup } from './write.js';
