import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isCertwrightError, type Logger, redactUrl, SecretBox } from '@certwright/core';
import { createMysqlStorage } from '@certwright/storage-mysql';
import { createPgliteStorage, createPostgresStorage, type MaintenanceReport } from '@certwright/storage-pg';
import { SqlQueue, type SqlStorage } from '@certwright/storage-sql';
import type { ServiceConfig } from './config.js';
import { type EncryptionKey, resolveEncryptionKey } from './encryption-key.js';
import { verifyEncryptionKey } from './key-check.js';

export interface OpenedStorage {
  storage: SqlStorage;
  /** The keyring the storage seals and opens with. */
  box: SecretBox;
  /** The SQL queue on the same database (the default when SVC_REDIS_URL is unset). */
  queue: SqlQueue;
  /**
   * Routine maintenance for engines without autovacuum (PGlite: ANALYZE); a no-op on
   * PostgreSQL and MySQL/MariaDB, which keep their statistics themselves.
   */
  maintain(): Promise<MaintenanceReport>;
  /** For /ready: a round trip to the database, bounded by `timeoutMs`. */
  check(timeoutMs?: number): Promise<{ ok: boolean; detail?: string }>;
  close(): Promise<void>;
}

/** A database connection with its keyring, before migrations or the key check (see openStorage). */
export interface ConnectedStorage {
  storage: SqlStorage;
  box: SecretBox;
  encryption: EncryptionKey;
  maintain(): Promise<MaintenanceReport>;
}

/**
 * Connects to the engine `config.databaseUrl` names (postgres://, postgresql://, mysql://; unset →
 * embedded PGlite under `<dataDir>/pglite`) and changes nothing in it: a restore must see the
 * target as it is, before migrations write their baseline rows.
 */
export async function connectStorage(
  config: Readonly<ServiceConfig>,
  logger: Logger,
  key?: EncryptionKey,
): Promise<ConnectedStorage> {
  const encryption = key ?? (await resolveEncryptionKey(config, logger));
  const box = new SecretBox(encryption.key, { previous: encryption.previous ?? [] });
  const url = config.databaseUrl;
  let storage: SqlStorage;
  // InnoDB recalculates persistent statistics itself (innodb_stats_auto_recalc).
  let maintain = async (): Promise<MaintenanceReport> => ({ analyzed: false, durationMs: 0 });
  if (url === undefined) {
    const dataDir = join(config.dataDir, 'pglite');
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const pglite = await createPgliteStorage({ dataDir }, { secretBox: box, logger });
    storage = pglite;
    maintain = () => pglite.maintain();
  } else {
    const scheme = new URL(url).protocol;
    if (scheme === 'postgres:' || scheme === 'postgresql:') {
      const postgres = createPostgresStorage(url, {
        secretBox: box,
        logger,
        preparedStatements: config.databasePreparedStatements ?? true,
      });
      storage = postgres;
      maintain = () => postgres.maintain();
    } else if (scheme === 'mysql:') storage = createMysqlStorage(url, { secretBox: box, logger });
    else throw new Error(`SVC_DATABASE_URL has an unsupported scheme '${scheme}' (${redactUrl(url)})`);
  }
  return { storage, box, encryption, maintain };
}

/**
 * Opens the database (connectStorage), then applies migrations and baseline seed data
 * under the cross-instance migration lock, so several instances may start at once, and checks
 * that the encryption key opens the secrets already in the database.
 * `key` (tests): a given key instead of SVC_ENCRYPTION_KEY or the data directory's key file.
 */
export async function openStorage(
  config: Readonly<ServiceConfig>,
  logger: Logger,
  key?: EncryptionKey,
): Promise<OpenedStorage> {
  const { storage, box, encryption, maintain } = await connectStorage(config, logger, key);
  try {
    const { applied } = await storage.migrate();
    await verifyEncryptionKey(storage, box, encryption);
    logger.info(
      {
        engine: storage.engine,
        applied_migrations: applied,
        key_id: box.keyId,
        ...(box.previousKeyIds.length > 0 ? { previous_key_ids: box.previousKeyIds } : {}),
      },
      'storage ready',
    );
  } catch (error) {
    await storage.close().catch(() => {});
    throw error;
  }
  return {
    storage,
    box,
    queue: new SqlQueue(storage.db),
    maintain,
    async check(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          storage.ping(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return { ok: true };
      } catch (error) {
        // The message of a translated error is generic; never the URL or SQL.
        const detail = isCertwrightError(error)
          ? `${storage.engine}: ${error.code}`
          : `${storage.engine}: ${(error as Error).message}`;
        return { ok: false, detail };
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => storage.close(),
  };
}
