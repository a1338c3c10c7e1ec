import type { VerificationOutcome } from '../connector.js';
import { DeploymentError } from '../connector.js';
import {
  BACKUP_SUFFIX,
  backupFile,
  closeJournal,
  type FileOwnership,
  type FileWriter,
  openJournal,
  recoverInterrupted,
  removeStaleTemporaries,
  restoreBackup,
  writeFileAtomic,
} from '../files.js';
import type { AgentLogger } from '../logger.js';

/** One file a deployment writes. */
export interface PlannedFile {
  path: string;
  content: string | Uint8Array;
  own: FileOwnership;
}

/** The server-specific steps around the file replacement. */
export interface FileSetSteps {
  /** Checks the configuration with the new files in place (e.g. `nginx -t`). */
  validate(): Promise<void>;
  /** Makes the server load them (e.g. `nginx -s reload`); a no-op for servers that watch files. */
  activate(): Promise<void>;
  /** Checks the running server took the new certificate; `undefined` when nothing to check. */
  confirm(): Promise<VerificationOutcome | undefined>;
  /** Run after the backups are back: bring the server back onto them; errors are ignored. */
  afterRestore(): Promise<void>;
}

/**
 * The deployment transaction every file-based connector shares: stale temporaries of an
 * earlier crash are removed and an interrupted deployment is undone first, each file is
 * backed up, a journal names them, the new files are written atomically, then validated,
 * activated and confirmed. A failure at any step puts every backup back (or removes a file
 * that did not exist), re-activates the old files and throws a {@link DeploymentError} whose
 * message is the failure reason. `anchor` is the file the journal is kept next to.
 */
export async function replaceFiles(
  anchor: string,
  files: readonly PlannedFile[],
  steps: FileSetSteps,
  context: { logger?: AgentLogger; targetId: string; writer?: FileWriter },
): Promise<VerificationOutcome | undefined> {
  for (const f of files) {
    removeStaleTemporaries(f.path);
    removeStaleTemporaries(f.path + BACKUP_SUFFIX);
  }
  // A deployment killed half-way left its files in place unconfirmed: back to the ones before
  // it, so the backups taken now are of files that were validated and served.
  if (recoverInterrupted(anchor)) {
    context.logger?.warn({ target_id: context.targetId }, 'an interrupted deployment was rolled back first');
  }
  let backups: { path: string; had: boolean }[];
  try {
    backups = files.map((f) => ({ path: f.path, had: backupFile(f.path) }));
    openJournal(anchor, backups);
  } catch (error) {
    // Nothing new was written yet: the files in place are the ones being served.
    throw new DeploymentError(
      `keeping a backup of the current files failed: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; nothing was changed`,
    );
  }
  /** Files already replaced; the others were never touched and need no restore. */
  const written = new Set<string>();
  const undo = async (reason: string): Promise<never> => {
    try {
      for (const b of backups) if (written.has(b.path)) restoreBackup(b.path, b.had);
    } catch (error) {
      // The journal stays: the next deployment or rollback of this target restores from it.
      throw new DeploymentError(
        `${reason}; restoring the previous files failed too (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}), they are restored by the next deployment or rollback`,
      );
    }
    closeJournal(anchor);
    // Back to the old files: the running server never stopped serving them, and a reload
    // that failed half-way is retried on them.
    await steps.afterRestore().catch(() => undefined);
    throw new DeploymentError(`${reason}; the previous certificate was restored`);
  };
  try {
    for (const f of files) {
      // Marked first: a failure after the rename (syncing the directory) leaves the new file.
      written.add(f.path);
      writeFileAtomic(f.path, f.content, f.own, context.writer);
    }
  } catch (error) {
    return undo(
      `writing the files failed: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    await steps.validate();
  } catch (error) {
    return undo(`validation failed: ${(error as Error).message}`);
  }
  try {
    await steps.activate();
  } catch (error) {
    return undo(`reload failed: ${(error as Error).message}`);
  }
  let verification: VerificationOutcome | undefined;
  try {
    verification = await steps.confirm();
  } catch (error) {
    return undo(`verification failed: ${(error as Error).message}`);
  }
  if (verification && !verification.ok) return undo(`verification failed: ${verification.detail}`);
  closeJournal(anchor);
  return verification;
}
