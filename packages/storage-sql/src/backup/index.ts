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
  nonEmptyTables,
  type RestoreOptions,
  type RestoreResult,
  restoreBackup,
  verifyBackup,
} from './restore.js';
export { type BackupMeta, type BackupSink, writeBackup } from './write.js';
