import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { pipeline, type Writable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { CertwrightError, type SecretBox } from '@certwright/core';
import { type BackupManifest, KEY_ROW_PREFIX, type SqlStorage, writeBackup } from '@certwright/storage-sql';

/** A backup file is gzip-compressed when its name ends in .gz; a reader goes by the bytes. */
const GZIP_MAGIC = [0x1f, 0x8b] as const;

export interface WrittenBackup {
  manifest: BackupManifest;
  path: string;
}

/**
 * The keys a restore of this database needs: the current one, and every key recorded as having
 * sealed something that no finished re-seal retired (key-check rows, docs/operations/key-rotation.md).
 */
async function keyIdsOf(storage: SqlStorage, box: SecretBox): Promise<string[]> {
  const rows = await storage.db.selectFrom('cw_key_check').select('id').execute();
  const recorded = rows
    .filter((r) => r.id.startsWith(KEY_ROW_PREFIX))
    .map((r) => r.id.slice(KEY_ROW_PREFIX.length));
  return [...new Set([box.keyId, ...recorded])];
}

async function write(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

/**
 * Writes a backup of `storage` to `path` (docs/operations/backup.md). The bytes go to a side file
 * first and are made durable, then linked to `path`: a reader never sees half a backup, and an
 * existing file is never replaced (the link fails instead).
 */
export async function writeBackupFile(
  storage: SqlStorage,
  box: SecretBox,
  path: string,
  release: string,
): Promise<WrittenBackup> {
  const partial = `${path}.partial`;
  const file = createWriteStream(partial, { mode: 0o600 });
  const gzip = path.endsWith('.gz') ? createGzip() : undefined;
  gzip?.pipe(file);
  const into = gzip ?? file;
  const failed = new Promise<never>((_, reject) => {
    file.once('error', reject);
    gzip?.once('error', reject);
  });
  try {
    const manifest = await Promise.race([
      writeBackup(
        storage.db,
        storage.flavor,
        { write: (text) => Promise.race([write(into, text), failed]) },
        { release, engine: storage.engine, encryptionKeyId: box.keyId, keyIds: await keyIdsOf(storage, box) },
      ),
      failed,
    ]);
    into.end();
    await Promise.race([once(file, 'close'), failed]);
    const handle = await open(partial, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(partial, path);
    return { manifest, path };
  } finally {
    file.destroy();
    await unlink(partial).catch(() => {});
  }
}

/** The bytes of a backup file from the start, decompressed when they are gzip (see restoreBackup). */
export async function* readBackupFile(path: string): AsyncGenerator<Uint8Array> {
  const handle = await open(path, 'r');
  let compressed: boolean;
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    compressed = bytesRead === 2 && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
  } finally {
    await handle.close();
  }
  if (!compressed) {
    yield* createReadStream(path);
    return;
  }
  const gunzip = pipeline(createReadStream(path), createGunzip(), () => {});
  try {
    yield* gunzip;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code?.startsWith('Z_')) {
      throw new CertwrightError(
        'validation_failed',
        'the backup is damaged or not a certwright backup: its gzip compression is broken',
        { cause: error },
      );
    }
    throw error;
  }
}
