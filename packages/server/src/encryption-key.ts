import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CertwrightError, type Logger } from '@certwright/core';
import { decodeEncryptionKey, type ServiceConfig } from './config.js';
import { readOrCreateFile } from './secret-file.js';

/** The key that seals secrets at rest, and where it came from (for start-up messages). */
export interface EncryptionKey {
  key: Uint8Array;
  /** SVC_ENCRYPTION_KEY_PREVIOUS: keys that only open (a rotation in progress); empty otherwise. */
  previous?: Uint8Array[];
  /** `configured`: SVC_ENCRYPTION_KEY; `generated`: the key file in the data directory. */
  origin: 'configured' | 'generated';
  /** The key file, when generated. */
  path?: string;
}

/**
 * SVC_ENCRYPTION_KEY wins; otherwise one is kept in the data directory (created on first
 * start, mode 0600). Several instances sharing one database must share the key, so they must
 * set the variable — said loudly at start-up. Instances started at once in one data directory
 * agree on one key: the first to create the file wins and the others read it.
 */
export async function resolveEncryptionKey(
  config: Readonly<ServiceConfig>,
  logger: Logger,
): Promise<EncryptionKey> {
  if (config.encryptionKey) {
    return { key: config.encryptionKey, previous: config.encryptionKeyPrevious, origin: 'configured' };
  }
  const path = join(config.dataDir, 'encryption-key');
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const { content, created } = await readOrCreateFile(path, () => `${randomBytes(32).toString('base64')}\n`);
  let key: Uint8Array;
  try {
    key = decodeEncryptionKey(content);
  } catch (error) {
    throw new CertwrightError(
      'config_invalid',
      `cannot use the encryption key in ${path}: ${(error as Error).message} (or set SVC_ENCRYPTION_KEY)`,
      { cause: error },
    );
  }
  if (created) {
    logger.warn(
      { path },
      'SVC_ENCRYPTION_KEY is not set: created a key in the data directory. Back it up with the database; ' +
        'set SVC_ENCRYPTION_KEY when several instances share one database.',
    );
  }
  return { key, origin: 'generated', path };
}
