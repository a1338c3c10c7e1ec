import { type Clock, type Logger, redactUrl, type SecretBox, silentLogger } from '@certwright/core';
import {
  createSqlStorage,
  type Database,
  type SqlStorage,
  withErrorTranslation,
} from '@certwright/storage-sql';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PgliteDialect } from './pglite-dialect.js';
import { type PreparedStatementOptions, prepareStatements, StatementNames } from './prepared.js';

export { PgliteDialect } from './pglite-dialect.js';
export type { PreparedStatementOptions } from './prepared.js';

/** What one `maintain()` pass did. */
export interface MaintenanceReport {
  /** Whether planner statistics were refreshed (false: the engine does it itself). */
  analyzed: boolean;
  /** Wall time of the pass in milliseconds. */
  durationMs: number;
}

/**
 * SQL storage with the routine maintenance an engine without autovacuum needs. The server runs
 * `maintain()` periodically under a lease (scheduler `storage-maintenance`).
 */
export interface MaintainedStorage extends SqlStorage {
  /**
   * PGlite: `ANALYZE` of the whole database, so the planner has statistics after bulk loads
   * (PGlite runs no autovacuum daemon). PostgreSQL: a no-op — autovacuum analyzes on its own.
   */
  maintain(): Promise<MaintenanceReport>;
}

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

export type PgliteLocation = { dataDir: string } | { memory: true };

/**
 * Embedded PostgreSQL (PGlite, WASM) in a data directory, or in memory for tests. Same SQL and
 * migrations as PostgreSQL. One process may open a data directory at a time.
 */
export async function createPgliteStorage(
  location: PgliteLocation,
  options: StorageOpenOptions,
): Promise<MaintainedStorage> {
  const logger = (options.logger ?? silentLogger).child({ component: 'storage', engine: 'pglite' });
  // pg_trgm and btree_gin back the certificate search index (migrations 14 and 23).
  const extensions = { pg_trgm, btree_gin };
  const pglite =
    'dataDir' in location
      ? await PGlite.create({ dataDir: location.dataDir, extensions })
      : await PGlite.create({ extensions });
  // PGlite starts its backend with enable_seqscan=off, which prices every sequential scan at
  // 10^10: the planner then never takes the scan that stops after the first matches, and a capped
  // count of a common search term (1,001 of a million rows) reads the whole trigram index instead
  // (1.3 s instead of milliseconds; docs/api/inventory.md). PostgreSQL's default, and the plans
  // the shared SQL is written for, have it on.
  await pglite.exec('set enable_seqscan = on');
  // PGlite reads its data directory through the OS file cache, so a page fetched out of order
  // costs about what the next page does. PostgreSQL's default random_page_cost (4, a spinning
  // disk) made the planner walk the sort's index and filter every row (25,000 rows read for an
  // issuer's page 100 at 100,000 certificates) rather than take the filter's own index (5,000);
  // 1.1 is the usual setting for storage that seeks for free (docs/storage/README.md).
  await pglite.exec('set random_page_cost = 1.1');
  logger.info(
    { data_dir: 'dataDir' in location ? location.dataDir : ':memory:' },
    'opened embedded PGlite storage',
  );
  const db = new Kysely<Database>({ dialect: withErrorTranslation(new PgliteDialect(pglite)) });
  const storage = createSqlStorage({
    db,
    flavor: 'postgres',
    engine: 'pglite',
    secretBox: options.secretBox,
    clock: options.clock,
  });
  // PGlite has no autovacuum daemon: without an explicit ANALYZE the planner never gets
  // statistics, and after a bulk load (a million revoked versions) it picks plans that turn
  // CRL streaming from seconds into minutes. ANALYZE samples a bounded number of rows per
  // table, so a pass costs about a second on a large database; it holds PGlite's single
  // connection meanwhile, hence a periodic scheduler rather than one per write.
  const maintain = async (): Promise<MaintenanceReport> => {
    const started = performance.now();
    await sql`ANALYZE`.execute(db);
    const durationMs = Math.round(performance.now() - started);
    logger.debug({ duration_ms: durationMs }, 'analyzed embedded database');
    return { analyzed: true, durationMs };
  };
  return {
    ...storage,
    // At every start, after migrations: a data directory restored or bulk-loaded while the
    // server was down gets statistics before the first request.
    async migrate() {
      const result = await storage.migrate();
      await maintain();
      return result;
    },
    maintain,
  };
}
