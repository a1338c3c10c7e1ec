import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

export interface FileOwnership {
  /** Permission bits, e.g. 0o600 for a key, 0o644 for a certificate. */
  mode: number;
  uid?: number;
  gid?: number;
}

/**
 * The one write call {@link writeFileAtomic} makes, as a port: the default is `fs.writeSync`;
 * a test can put a failing one in (a full disk, an I/O error) without a full disk.
 */
export type FileWriter = (fd: number, data: Uint8Array, offset: number) => number;

const defaultWriter: FileWriter = (fd, data, offset) => writeSync(fd, data, offset);

/**
 * Writes `content` to `path` so that a reader sees either the old file or the whole new one:
 * a temporary file in the same directory is written, synced, given its mode and owner, then
 * renamed over the target (rename is atomic within one file system). A failure at any step —
 * a full disk, a refused chown — removes the temporary file and leaves the target untouched.
 */
export function writeFileAtomic(
  path: string,
  content: string | Uint8Array,
  own: FileOwnership,
  write: FileWriter = defaultWriter,
): void {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', own.mode);
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    let off = 0;
    while (off < data.length) off += write(fd, data, off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    if (own.uid !== undefined || own.gid !== undefined) chownSync(temp, own.uid ?? -1, own.gid ?? -1);
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dirname(path));
}

/**
 * Removes temporary files an interrupted {@link writeFileAtomic} of `path` left (a SIGKILL or a
 * power cut between write and rename). The target itself was never touched by such a write.
 */
export function removeStaleTemporaries(path: string): number {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  let removed = 0;
  for (const name of readdirSync(dir)) {
    if (name.startsWith(prefix) && /^[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length))) {
      rmSync(join(dir, name), { force: true });
      removed += 1;
    }
  }
  return removed;
}

/** Makes a rename durable: without it a crash may bring the old directory entry back. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Suffix of the copy kept of a file before it is replaced. */
export const BACKUP_SUFFIX = '.certwright-backup';

/**
 * Copies `path` to its backup (mode kept); returns false when there was no file to keep. The
 * copy goes to a temporary name first and is renamed into place, so a backup cut short (a
 * full disk) never replaces a good one.
 */
export function backupFile(path: string): boolean {
  if (!existsSync(path)) return false;
  // Named like a writeFileAtomic temporary of the backup, so removeStaleTemporaries finds it.
  const temp = join(
    dirname(path),
    `.${basename(path)}${BACKUP_SUFFIX}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    copyFileSync(path, temp);
    renameSync(temp, path + BACKUP_SUFFIX);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return true;
}

/**
 * Puts the backup back over `path` by rename (atomic), or removes `path` if it had none. The
 * backup is hard-linked to the temporary name where the file system allows it, so a restore
 * needs no free space (a full disk is a reason to restore); nothing ever writes a file in
 * place, so the shared inode is never changed.
 */
export function restoreBackup(path: string, hadBackup: boolean): void {
  if (hadBackup) {
    const temp = `${path}.certwright-restore`;
    rmSync(temp, { force: true });
    try {
      linkSync(path + BACKUP_SUFFIX, temp);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
      copyFileSync(path + BACKUP_SUFFIX, temp);
    }
    try {
      renameSync(temp, path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
  } else {
    rmSync(path, { force: true });
  }
}

export class PathNotAllowedError extends Error {
  override name = 'PathNotAllowedError';
}

/**
 * Refuses a path outside the allowed directories. The directory is resolved through symlinks,
 * so a link planted inside an allowed directory cannot send a write elsewhere.
 */
export function checkAllowedPath(path: string, allowedDirs: readonly string[], field: string): string {
  if (!isAbsolute(path)) throw new PathNotAllowedError(`${field} must be an absolute path`);
  if (allowedDirs.length === 0)
    throw new PathNotAllowedError(`no allowed directories are configured for ${field}`);
  let dir: string;
  try {
    dir = realpathSync(dirname(resolve(path)));
  } catch {
    throw new PathNotAllowedError(`${field}: the directory does not exist`);
  }
  const full = join(dir, basename(path));
  for (const allowed of allowedDirs) {
    let root: string;
    try {
      root = realpathSync(allowed);
    } catch {
      continue;
    }
    const rel = relative(root, full);
    if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return full;
  }
  throw new PathNotAllowedError(`${field} is outside the allowed directories`);
}

/** Suffix of the journal a deployment keeps while its new files are not yet confirmed. */
export const JOURNAL_SUFFIX = '.certwright-journal';

interface JournalEntry {
  path: string;
  had: boolean;
}

/**
 * Records, next to `anchor`, which files a deployment is replacing and whether each had a
 * backup. Written after the backups and before the first new file; removed when the deployment
 * succeeded or was undone. A journal found later means the deploying process died in between
 * (SIGKILL, power loss): {@link recoverInterrupted} then puts the backups back.
 */
export function openJournal(anchor: string, entries: readonly JournalEntry[]): void {
  writeFileAtomic(anchor + JOURNAL_SUFFIX, JSON.stringify(entries), { mode: 0o600 });
}

export function closeJournal(anchor: string): void {
  rmSync(anchor + JOURNAL_SUFFIX, { force: true });
}

/** Restores the files of an interrupted deployment; returns whether there was one. */
export function recoverInterrupted(anchor: string): boolean {
  let entries: JournalEntry[];
  try {
    entries = JSON.parse(readFileSync(anchor + JOURNAL_SUFFIX, 'utf8')) as JournalEntry[];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    // A journal cut short was written before any new file (it is written atomically), so
    // there is nothing to undo.
    closeJournal(anchor);
    return false;
  }
  for (const e of Array.isArray(entries) ? entries : []) {
    if (typeof e?.path === 'string' && e.path.startsWith(dirname(anchor)))
      restoreBackup(e.path, e.had === true);
  }
  closeJournal(anchor);
  return true;
}
