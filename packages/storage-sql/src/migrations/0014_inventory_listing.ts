import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * Indexes that keep the certificate list and the dashboard fast at a million certificates
 * (docs/storage/README.md, "Inventory at scale").
 *
 * Every engine: one index per equality filter (owner, team, issuer, status) that also carries the
 * default sort (`created_at`, then `id`), so a filtered first page — and a keyset page after a
 * cursor — reads 50 index entries instead of every match; issuer + expiry for "what of this CA
 * expires soon"; and `(column, id)` for each other sort, so every sort pages by keyset.
 *
 * PostgreSQL and PGlite only: a trigram GIN index on the lower-cased `search_text` (name, common
 * name, SANs) serves the substring search (`LIKE '%…%'`) without reading every row. It needs the
 * pg_trgm extension (PostgreSQL contrib, bundled with PGlite); when the server does not offer it
 * the index is left out and search falls back to scanning, as on MySQL/MariaDB, which have no
 * trigram index (their FULLTEXT indexes match words, not substrings).
 */
export const inventoryListing: Migration = {
  version: 14,
  name: 'inventory_listing',
  async up(db, t) {
    for (const [name, columns] of [
      ['ix_certs_owner_created', ['owner_id', 'created_at', 'id']],
      ['ix_certs_team_created', ['team_id', 'created_at', 'id']],
      ['ix_certs_issuer_created', ['issuer_id', 'created_at', 'id']],
      ['ix_certs_status_created', ['status', 'created_at', 'id']],
      ['ix_certs_issuer_expires', ['issuer_id', 'expires_at', 'id']],
      ['ix_certs_expires_id', ['expires_at', 'id']],
      ['ix_certs_status_id', ['status', 'id']],
      ['ix_certs_common_name', ['common_name', 'id']],
      ['ix_certs_updated', ['updated_at', 'id']],
    ] as const) {
      await db.schema
        .createIndex(name)
        .on('certificates')
        .columns([...columns])
        .execute();
    }
    // (expires_at, id) serves everything (expires_at) did.
    if (t.flavor === 'mysql') await sql`drop index ix_certs_expires on certificates`.execute(db);
    else await db.schema.dropIndex('ix_certs_expires').execute();

    if (t.flavor !== 'postgres') return;
    const { rows } = await sql<{
      n: number | string;
    }>`select count(*) as n from pg_available_extensions where name = 'pg_trgm'`.execute(db);
    if (Number(rows[0]?.n ?? 0) === 0) return;
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index ix_certs_search_trgm on certificates using gin (search_text gin_trgm_ops)`.execute(
      db,
    );
  },
};
