import { type Clock, type Logger, redactUrl, type SecretBox, silentLogger } from '@certwright/core';
import {
  createSqlStorage,
  type Database,
  type SqlStorage,
  withErrorTranslation,
} from '@certwright/storage-sql';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PgliteDialect } from './pglite-dialect.js';

export { PgliteDialect } from './pglite-dialect.js';

export interface StorageOpenOptions {
  /** Seals secrets at rest (issuer/target config, webhook headers, private keys). */
  secretBox: SecretBox;
  clock?: Clock;
  logger?: Logger;
}

export interface PostgresStorageOptions extends StorageOpenOptions {
  /** Pool size; default 10. */
  maxConnections?: number;
  /** How long a request waits for a connection before failing `unavailable`; default 10 s. */
  connectionTimeoutMs?: number;
}

/**
 * PostgreSQL through `pg`. The pool drops broken connections and dials again on the next query,
 * so queries fail with `unavailable` while the server is down and succeed once it is back,
 * without a restart. Call `migrate()` before first use.
 */
export function createPostgresStorage(url: string, options: PostgresStorageOptions): SqlStorage {
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
  pool.on('connect', (client) => {
    client.on('error', onLost);
  });
  logger.info({ database: redactUrl(url) }, 'opening PostgreSQL storage');
  const db = new Kysely<Database>({ dialect: withErrorTranslation(new PostgresDialect({ pool })) });
  return createSqlStorage({
    db,
    flavor: 'postgres',
    engine: 'postgres',
    secretBox: options.secretBox,
    clock: options.clock,
  });
}

export type PgliteLocation = { dataDir: string } | { memory: true };

/**
 * Embedded PostgreSQL (PGlite, WASM) in a data directory, or in memory for tests. Same SQL and
 * migrations as PostgreSQL. One process may open a data directory at a time.
 */
export async function createPgliteStorage(
  location: PgliteLocation,
  options: StorageOpenOptions,
): Promise<SqlStorage> {
  const logger = (options.logger ?? silentLogger).child({ component: 'storage', engine: 'pglite' });
  const pglite = 'dataDir' in location ? await PGlite.create(location.dataDir) : await PGlite.create();
  logger.info(
    { data_dir: 'dataDir' in location ? location.dataDir : ':memory:' },
    'opened embedded PGlite storage',
  );
  const db = new Kysely<Database>({ dialect: withErrorTranslation(new PgliteDialect(pglite)) });
  return createSqlStorage({
    db,
    flavor: 'postgres',
    engine: 'pglite',
    secretBox: options.secretBox,
    clock: options.clock,
  });
}
