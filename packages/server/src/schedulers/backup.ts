import { mkdir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type Clock, type EphemeralStore, type Logger, type SecretBox, systemClock } from '@certwright/core';
import type { SqlStorage } from '@certwright/storage-sql';
import { writeBackupFile } from '../ops/backup-file.js';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/** How often an instance looks whether a backup is due; the interval itself spaces the backups. */
export const BACKUP_CHECK_EVERY_MS = 60_000;
/** `certwright-20261203T091500123Z.cwbackup.gz`: sorts by time as text. */
const NAME = /^certwright-(\d{8}T\d{9}Z)\.cwbackup\.gz$/;

export interface ScheduledBackupOptions {
  storage: SqlStorage;
  box: SecretBox;
  /** SVC_BACKUP_DIR */
  dir: string;
  /** SVC_BACKUP_INTERVAL */
  intervalMs: number;
  /** SVC_BACKUP_KEEP: the newest backups kept in `dir`; older ones are removed after each backup. */
  keep: number;
  release: string;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  /** Names the backups and judges their age (tests). */
  clock?: Clock;
}

export const backupFileName = (at: Date): string =>
  `certwright-${at.toISOString().replace(/[-:.]/g, '')}.cwbackup.gz`;

/** When a backup named by backupFileName was taken. */
export function takenAt(name: string): Date | undefined {
  const stamp = NAME.exec(name)?.[1];
  if (!stamp) return undefined;
  const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}.${stamp.slice(15, 18)}Z`;
  return new Date(iso);
}

/** The backups of `dir` this scheduler wrote, oldest first (other files are left alone). */
export async function listBackups(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => NAME.test(name)).sort();
}

/**
 * Scheduled backups (docs/operations/backup.md): one instance at a time — the scheduler lease,
 * held for one interval, so instances sharing a database take one backup per interval between
 * them — writes a gzip backup into `dir` and then keeps only the newest `keep`. A backup younger
 * than the interval in `dir` (a restart) also makes a tick wait. The embedded database is backed
 * up this way while the server runs on it.
 */
export function startScheduledBackups(options: ScheduledBackupOptions): LeasedTask {
  const log = options.logger.child({ scheduler: 'backup' });
  return startLeasedTask({
    name: 'scheduler:backup',
    holder: options.holder,
    intervalMs: Math.min(BACKUP_CHECK_EVERY_MS, options.intervalMs),
    leaseMs: options.intervalMs,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    run: () => backupNow(options, log),
  });
}

async function backupNow(options: ScheduledBackupOptions, log: Logger) {
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  const clock = options.clock ?? systemClock;
  const now = clock.now();
  const newest = (await listBackups(options.dir)).at(-1);
  const newestAt = newest === undefined ? undefined : takenAt(newest);
  if (newestAt && now.getTime() - newestAt.getTime() < options.intervalMs) {
    return { skipped: 'a backup younger than the interval exists', newest };
  }
  const started = Date.now();
  const path = join(options.dir, backupFileName(now));
  const { manifest } = await writeBackupFile(options.storage, options.box, path, options.release);
  const rows = manifest.parts.reduce((n, p) => n + p.rows, 0);
  const removed: string[] = [];
  const all = await listBackups(options.dir);
  for (const name of all.slice(0, Math.max(0, all.length - options.keep))) {
    await unlink(join(options.dir, name));
    removed.push(name);
  }
  log.info(
    { path, rows, duration_ms: Date.now() - started, removed, kept: all.length - removed.length },
    'scheduled backup written',
  );
  return { path, rows, removed };
}
