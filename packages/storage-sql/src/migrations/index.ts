import { CertwrightError } from '@certwright/core';
import { type Kysely, sql } from 'kysely';
import type { Database, Flavor } from '../schema.js';
import { inventory } from './0001_inventory.js';
import { queue } from './0002_queue.js';
import { keyCheck } from './0004_key_check.js';
import { acme } from './0005_acme.js';
import { auditChain } from './0006_audit_chain.js';
import { profileIpSans } from './0007_profile_ip_sans.js';
import { scepProbes } from './0008_scep_probes.js';
import { webhookSettings } from './0009_webhook_settings.js';
import { scepRa } from './0010_scep_ra.js';
import { people } from './0011_people.js';
import { discovery } from './0012_discovery.js';
import { oidcProviders } from './0013_oidc_providers.js';
import { inventoryListing } from './0014_inventory_listing.js';
import { inventoryCounts } from './0015_inventory_counts.js';
import { crlEntriesIndex } from './0016_crl_entries_index.js';
import { crlEntryDer } from './0018_crl_entry_der.js';
import { notificationClaims } from './0019_notification_claims.js';
import { breakglassLockout } from './0022_breakglass_lockout.js';
import { scopedSearch } from './0023_scoped_search.js';
import { ownerSearchWalk } from './0024_owner_search_walk.js';
import { ownerNameOrder } from './0025_owner_name_order.js';
import { planRows } from './0027_plan_rows.js';
import { webhookUrlSealed } from './0028_webhook_url_sealed.js';
import { undeliverableNotifications } from './0029_undeliverable_notifications.js';
import { keyring } from './0034_keyring.js';
import { profileShortLived } from './0037_profile_short_lived.js';
import { versionSerialIndex } from './0038_version_serial_index.js';
import { columnTypes, type Migration } from './types.js';

export type { ColumnTypes, Migration } from './types.js';

/**
 * Every migration, ordered by version. Each is applied once, by version: a database that already
 * has a later version applies a missing earlier one on its next start, so a new migration never
 * changes one that was applied.
 */
export const MIGRATIONS: readonly Migration[] = [
  inventory,
  queue,
  keyCheck,
  acme,
  auditChain,
  profileIpSans,
  scepProbes,
  webhookSettings,
  scepRa,
  people,
  discovery,
  oidcProviders,
  inventoryListing,
  inventoryCounts,
  crlEntriesIndex,
  crlEntryDer,
  notificationClaims,
  breakglassLockout,
  scopedSearch,
  ownerSearchWalk,
  ownerNameOrder,
  planRows,
  webhookUrlSealed,
  undeliverableNotifications,
  keyring,
  profileShortLived,
  versionSerialIndex,
];

/** Advisory lock key shared by every certwright instance (PostgreSQL takes a bigint). */
const PG_LOCK_KEY = 7_326_040_211_001n;
const MYSQL_LOCK_NAME = 'certwright_migrate';
const MYSQL_LOCK_TIMEOUT_SECONDS = 600;

export interface MigrateResult {
  /** Versions applied by this call (empty when the schema was already current). */
  applied: number[];
}

/**
 * Brings the schema up to date and runs `afterMigrate` (seed data; it is told which versions
 * this call applied) under one cross-instance lock: pg_advisory_lock on PostgreSQL/PGlite,
 * GET_LOCK on MySQL/MariaDB. Safe to call at every start, repeatedly and from many instances at
 * once: late arrivals wait for the lock, then find nothing left to apply.
 */
export async function migrate(
  db: Kysely<Database>,
  flavor: Flavor,
  afterMigrate?: (db: Kysely<Database>, applied: readonly number[]) => Promise<void>,
): Promise<MigrateResult> {
  // The lock is per session, so everything runs on one dedicated connection.
  return db.connection().execute(async (conn) => {
    await acquireLock(conn, flavor);
    try {
      const applied = await applyPending(conn, flavor);
      if (afterMigrate) await afterMigrate(conn, applied);
      return { applied };
    } finally {
      await releaseLock(conn, flavor);
    }
  });
}

async function acquireLock(db: Kysely<Database>, flavor: Flavor): Promise<void> {
  if (flavor === 'postgres') {
    await sql`select pg_advisory_lock(${sql.lit(PG_LOCK_KEY.toString())}::bigint)`.execute(db);
    return;
  }
  const { rows } = await sql<{
    l: number | null;
  }>`select get_lock(${MYSQL_LOCK_NAME}, ${MYSQL_LOCK_TIMEOUT_SECONDS}) as l`.execute(db);
  if (Number(rows[0]?.l) !== 1) {
    throw new CertwrightError(
      'unavailable',
      'timed out waiting for the migration lock held by another instance',
    );
  }
}

async function releaseLock(db: Kysely<Database>, flavor: Flavor): Promise<void> {
  if (flavor === 'postgres') {
    await sql`select pg_advisory_unlock(${sql.lit(PG_LOCK_KEY.toString())}::bigint)`.execute(db);
  } else {
    await sql`select release_lock(${MYSQL_LOCK_NAME})`.execute(db);
  }
}

async function applyPending(db: Kysely<Database>, flavor: Flavor): Promise<number[]> {
  await db.schema
    .createTable('cw_schema_migrations')
    .ifNotExists()
    .$call(columnTypes(flavor).table)
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('applied_at', columnTypes(flavor).ts, (c) => c.notNull())
    .execute();
  const done = new Set(
    (await db.selectFrom('cw_schema_migrations').select('version').execute()).map((r) => Number(r.version)),
  );
  const types = columnTypes(flavor);
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    const record = (d: Kysely<Database>) =>
      d
        .insertInto('cw_schema_migrations')
        .values({ version: m.version, name: m.name, applied_at: new Date() })
        .execute();
    if (flavor === 'postgres') {
      // PostgreSQL DDL is transactional: a failed migration leaves no trace.
      await db.transaction().execute(async (trx) => {
        await m.up(trx, types);
        await record(trx);
      });
    } else {
      // MySQL commits each DDL statement implicitly; a transaction would promise what it cannot keep.
      await m.up(db, types);
      await record(db);
    }
    applied.push(m.version);
  }
  return applied;
}

/** Versions recorded as applied, ascending. */
export async function appliedMigrations(db: Kysely<Database>): Promise<number[]> {
  const rows = await db.selectFrom('cw_schema_migrations').select('version').orderBy('version').execute();
  return rows.map((r) => Number(r.version));
}
