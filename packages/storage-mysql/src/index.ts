import { type Clock, type Logger, redactUrl, type SecretBox, silentLogger } from '@certwright/core';
import {
  createSqlStorage,
  type Database,
  type SqlStorage,
  withErrorTranslation,
} from '@certwright/storage-sql';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';

export interface MysqlStorageOptions {
  /** Seals secrets at rest (issuer/target config, webhook headers, private keys). */
  secretBox: SecretBox;
  clock?: Clock;
  logger?: Logger;
  /** Pool size; default 10. */
  maxConnections?: number;
  /** How long to wait when dialling the server before failing `unavailable`; default 10 s. */
  connectTimeoutMs?: number;
}

/**
 * MySQL 8 or MariaDB 10.6+ through mysql2 (`mysql://user:pass@host:3306/db`). Timestamps are
 * DATETIME(3) read and written as UTC; the pool replaces connections that die, so queries fail
 * with `unavailable` while the server is down and work again once it is back. Call
 * `migrate()` before first use.
 */
export function createMysqlStorage(url: string, options: MysqlStorageOptions): SqlStorage {
  const logger = (options.logger ?? silentLogger).child({ component: 'storage', engine: 'mysql' });
  const parsed = new URL(url);
  const pool = createPool({
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')),
    connectionLimit: options.maxConnections ?? 10,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    // DATETIME has no zone: the application treats every stored value as UTC.
    timezone: 'Z',
    dateStrings: false,
    supportBigNumbers: true,
    bigNumberStrings: false,
    charset: 'utf8mb4',
    enableKeepAlive: true,
  });
  pool.on('connection', (connection) => {
    // A connection that dies emits 'error'; the failing query rejects on its own.
    connection.on('error', (error: Error & { code?: string }) => {
      logger.warn({ err: { message: error.message, code: error.code } }, 'database connection lost');
    });
  });
  logger.info({ database: redactUrl(url) }, 'opening MySQL storage');
  const db = new Kysely<Database>({ dialect: withErrorTranslation(new MysqlDialect({ pool })) });
  return createSqlStorage({
    db,
    flavor: 'mysql',
    engine: 'mysql',
    secretBox: options.secretBox,
    clock: options.clock,
  });
}
