import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CertwrightError, isCertwrightError } from '@certwright/core';
import {
  type BackupManifest,
  checkSchemaVersion,
  checkTargetEmpty,
  createSqlStorage,
  restoreBackup,
  restoreRefusalOf,
  restoreRefused,
  verifyBackup,
} from '@certwright/storage-sql';
import { verifyEncryptionKey } from '../key-check.js';
import { type ConnectedStorage, connectStorage } from '../storage.js';
import { readBackupFile } from './backup-file.js';
import { type CommandIo, commandConfig, commandLogger, messageOf } from './command.js';
import { EXIT } from './exit-codes.js';

export const RESTORE_USAGE = `usage: certwright-server restore --in FILE

Restores a backup written by \`certwright-server backup\` (or a scheduled backup) into the empty
database the server's configuration names: SVC_DATABASE_URL (PostgreSQL or MySQL/MariaDB) or,
unset, the embedded database under SVC_DATA_DIR. Any engine restores any engine's backup. The
keyring (SVC_ENCRYPTION_KEY, SVC_ENCRYPTION_KEY_PREVIOUS) must hold every key the backup names.
The whole file is checked before anything is written, the rows go in as one transaction, and
the row counts, the audit chain and the keys are checked before it commits.
Exit codes: 0 restored, 1 failed, 2 usage, 3 target not empty, 4 wrong encryption key,
5 damaged backup, 6 backup of another schema version, 7 restored data did not verify (rolled
back). See docs/operations/backup.md.`;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** `certwright-server restore`: exit codes as RESTORE_USAGE lists them. */
export async function runRestoreCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  let values: { in?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { in: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    io.err(`${messageOf(error)}\n${RESTORE_USAGE}`);
    return EXIT.usage;
  }
  if (values.help) {
    io.out(RESTORE_USAGE);
    return EXIT.ok;
  }
  const file = values.in;
  if (!file) {
    io.err(`--in is required\n${RESTORE_USAGE}`);
    return EXIT.usage;
  }
  const fail = (code: number, message: string) => {
    io.err(`certwright-server restore: ${message}`);
    return code;
  };
  if (!(await exists(file))) return fail(EXIT.failed, `cannot read ${file}`);

  let config: ReturnType<typeof commandConfig>;
  try {
    config = commandConfig(io);
  } catch (error) {
    return fail(EXIT.usage, messageOf(error));
  }
  let manifest: BackupManifest;
  try {
    io.err(`checking ${file}`);
    manifest = await verifyBackup(readBackupFile(file));
  } catch (error) {
    return fail(codeOf(error), messageOf(error));
  }
  // Without SVC_ENCRYPTION_KEY a key file would be made up for the target: it cannot be the
  // backed-up installation's key.
  if (!config.encryptionKey && !(await exists(join(config.dataDir, 'encryption-key')))) {
    return fail(
      EXIT.wrongKey,
      `the backup's secrets are sealed under key ${manifest.key_ids.join(', ')}: set SVC_ENCRYPTION_KEY ` +
        '(and SVC_ENCRYPTION_KEY_PREVIOUS) to the keys of the backed-up installation',
    );
  }
  let connected: ConnectedStorage;
  try {
    connected = await connectStorage(config, commandLogger(config));
  } catch (error) {
    return fail(
      isCertwrightError(error) && error.code === 'config_invalid' ? EXIT.usage : EXIT.failed,
      messageOf(error),
    );
  }
  const { storage, box, encryption } = connected;
  try {
    const missing = manifest.key_ids.filter((id) => !box.hasKey(id));
    if (missing.length > 0) {
      return fail(
        EXIT.wrongKey,
        `the backup's secrets are sealed under key ${missing.join(', ')}, which the keyring (${box.keyIds.join(', ')}) ` +
          'lacks: set SVC_ENCRYPTION_KEY (and SVC_ENCRYPTION_KEY_PREVIOUS) to the keys of the backed-up installation',
      );
    }
    checkSchemaVersion(manifest);
    await checkTargetEmpty(storage.db, storage.flavor);
    io.err(`restoring ${manifest.parts.length} tables into ${storage.engine}`);
    let audit: { checked: number } = { checked: 0 };
    const result = await restoreBackup(storage.db, storage.flavor, () => readBackupFile(file), {
      checked: manifest,
      // Inside the restore's transaction: a failure here leaves the target empty again.
      verify: async (trx) => {
        const inside = createSqlStorage({
          db: trx,
          flavor: storage.flavor,
          engine: storage.engine,
          secretBox: box,
        });
        const chain = await inside.audit.verify();
        if (!chain.ok) {
          throw restoreRefused(
            'verification',
            `the restored audit chain does not verify: broken at event ${chain.brokenAt} (${chain.reason})`,
          );
        }
        audit = { checked: chain.checked };
        try {
          await verifyEncryptionKey(inside, box, encryption);
        } catch (error) {
          throw restoreRefused(
            'verification',
            `the restored secrets do not open: ${messageOf(error)}`,
            error,
          );
        }
      },
    });
    io.err(`restored and verified: ${Object.values(result.counts).reduce((n, c) => n + c, 0)} rows`);
    io.out(
      JSON.stringify({
        restored: true,
        engine: storage.engine,
        from_engine: manifest.engine,
        release: manifest.release,
        created_at: manifest.created_at,
        counts: result.counts,
        audit_chain: { ok: true, checked: audit.checked },
      }),
    );
    return EXIT.ok;
  } catch (error) {
    return fail(codeOf(error), messageOf(error));
  } finally {
    await storage.close();
  }
}

function codeOf(error: unknown): number {
  if (isCertwrightError(error) && error.code === 'validation_failed') return EXIT.damaged;
  switch (restoreRefusalOf(error)) {
    case 'target_not_empty':
      return EXIT.targetNotEmpty;
    case 'schema_version':
    case 'schema_shape':
      return EXIT.otherSchema;
    case 'counts':
    case 'verification':
      return EXIT.notVerified;
    default:
      return error instanceof CertwrightError && error.code === 'config_invalid' ? EXIT.usage : EXIT.failed;
  }
}
