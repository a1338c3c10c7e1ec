import { redactUrl, silentLogger } from '@certwright/core';
import { createSqlStorage, type Database, withErrorTranslation } from '@certwright/storage-sql';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { MaintainedStorage, StorageOpenOptions } from './maintained.js';
import { type PreparedStatementOptions, prepareStatements, StatementNames } from './prepared.js';

export interface PostgresStorageOptions extends StorageOpenOptions {
  /** Pool size; default 10. */
  maxConnections?: number;
  /** How long a request waits for a connection before failing `unavailable`; default 10 s. */
  connectionTimeoutMs?: number;
  /**
   * Statements sent again and again go as named (prepared) statements (prepared.ts); default
   * on. `false` behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean | PreparedStatementOptions;
}

/**
 * PostgreSQL through `pg`. The pool drops broken connections and dials again on the next query,
 * so queries fail with `unavailable` while the server is down and succeed once it is back,
 * without a restart. Call `migrate()` before first use.
 */
export function createPostgresStorage(url: string, options: PostgresStorageOptions): MaintainedStorage {
  const logger = (options.logger ?? silentLogger).child({ component: 'storage', engine: 'postgres' });
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
  });
  const onLost = (error: Error) => {
    logger.warn(
      { err: { message: error.message, code: (error as { code?: string }).code } },
      'database connection lost',
    );
  };
  // A connection that dies emits 'error' on its client: the pool listens only while the client
  // is idle, so a client checked out for a query needs its own listener or Node would crash.
  // The failing query itself rejects and becomes `unavailable`.
  pool.on('error', onLost);
  const prepared = options.preparedStatements ?? true;
  const names = prepared === false ? undefined : new StatementNames(prepared === true ? {} : prepared);
  pool.on('connect', (client) => {
    client.on('error', onLost);
    if (names) prepareStatements(client, names);
  });
  logger.info({ database: redactUrl(url) }, 'opening PostgreSQL storage');
  const db = new Kysely<Database>({ dialect: withErrorTranslation(new PostgresDialect({ pool })) });
  const storage = createSqlStorage({
    db,
    flavor: 'postgres',
    engine: 'postgres',
    secretBox: options.secretBox,
    clock: options.clock,
  });
  // Autovacuum keeps statistics current on a real server; nothing to do here.
  return { ...storage, maintain: async () => ({ analyzed: false, durationMs: 0 }) };
}
