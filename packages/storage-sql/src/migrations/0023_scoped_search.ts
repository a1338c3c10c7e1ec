import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * PostgreSQL and PGlite: the search index also holds the owner, team and issuer (docs/storage/
 * README.md, "Inventory at scale").
 *
 * A search combined with an owner (team, issuer) filter was answered by two bitmaps — the
 * trigram index's matches of the search (111,111 rows for `host-1` at a million certificates)
 * and the owner's b-tree entries (50,000) — built in full and then intersected, about 60 ms on
 * an idle machine. A GIN index over `(owner_id, team_id, issuer_id, search_text gin_trgm_ops)`
 * (the b-tree columns through the btree_gin extension) intersects the posting lists of the
 * owner and of the trigrams inside one index scan, stepping over what the rarest list rules
 * out. GIN serves any subset of its columns equally well, so the same index answers a search
 * alone and replaces migration 14's trigram index (one index to keep up on every write).
 *
 * Left out where the server lacks btree_gin (PostgreSQL without its contrib package) or the
 * trigram index was left out (no pg_trgm): search then runs as before. MySQL/MariaDB have no
 * substring index at all (docs/storage/README.md).
 */
export const scopedSearch: Migration = {
  version: 23,
  name: 'scoped_search',
  async up(db, t) {
    if (t.flavor !== 'postgres') return;
    const { rows } = await sql<{ n: number | string }>`
      select (select count(*) from pg_available_extensions where name = 'btree_gin')
        * (select count(*) from pg_indexes where indexname = 'ix_certs_search_trgm'
             and schemaname = current_schema()) as n`.execute(db);
    if (Number(rows[0]?.n ?? 0) === 0) return;
    await sql`create extension if not exists btree_gin`.execute(db);
    await sql`create index ix_certs_search_scoped on certificates
      using gin (owner_id, team_id, issuer_id, search_text gin_trgm_ops)`.execute(db);
    await sql`drop index ix_certs_search_trgm`.execute(db);
  },
};
