import { mkdir } from 'node:fs/promises';
import { silentLogger } from '@certwright/core';
import { createSqlStorage, type Database, withErrorTranslation } from '@certwright/storage-sql';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, sql } from 'kysely';
import type { MaintainedStorage, MaintenanceReport, StorageOpenOptions } from './maintained.js';
import { PgliteDialect } from './pglite-dialect.js';

export type PgliteLocation = { dataDir: string } | { memory: true };

/** The extensions the migrations create: pg_trgm and btree_gin back the certificate search index (migrations 14 and 23). */
export const PGLITE_EXTENSIONS = { pg_trgm, btree_gin };

/**
 * Embedded PostgreSQL (PGlite, WASM) in a data directory, or in memory for tests. Same SQL and
 * migrations as PostgreSQL. One process may open a data directory at a time. A missing data
 * directory is created with its parents (PGlite itself creates only the last one).
 */
export async function createPgliteStorage(
  location: PgliteLocation,
  options: StorageOpenOptions,
): Promise<MaintainedStorage> {
  if ('dataDir' in location) await mkdir(location.dataDir, { recursive: true });
  const pglite =
    'dataDir' in location
      ? await PGlite.create({ dataDir: location.dataDir, extensions: PGLITE_EXTENSIONS })
      : await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  return pgliteStorage(pglite, 'dataDir' in location ? location.dataDir : ':memory:', options);
}

/** SQL storage over an open PGlite instance (`where` names its data directory in the log). */
export async function pgliteStorage(
  pglite: PGlite,
  where: string,
  options: StorageOpenOptions,
): Promise<MaintainedStorage> {
  const logger = (options.logger ?? silentLogger).child({ component: 'storage', engine: 'pglite' });
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
  logger.info({ data_dir: where }, 'opened embedded PGlite storage');
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
