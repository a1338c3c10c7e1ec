import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeEncryptionKey, type Logger, type ServiceConfig } from '@certwright/core';

/**
 * The key that seals secrets at rest. SVC_ENCRYPTION_KEY wins; otherwise one is kept in the
 * data directory (created on first start, mode 0600). Several instances sharing one database
 * must share the key, so they must set the variable — said loudly at start-up.
 */
export async function resolveEncryptionKey(
  config: Readonly<ServiceConfig>,
  logger: Logger,
): Promise<Uint8Array> {
  if (config.encryptionKey) return config.encryptionKey;
  const path = join(config.dataDir, 'encryption-key');
  try {
    return decodeEncryptionKey(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`cannot use the encryption key in ${path}: ${(error as Error).message}`);
    }
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(path, 0o600);
  logger.warn(
    { path },
    'SVC_ENCRYPTION_KEY is not set: created a key in the data directory. Back it up with the database; ' +
      'set SVC_ENCRYPTION_KEY when several instances share one database.',
  );
  return new Uint8Array(key);
}
