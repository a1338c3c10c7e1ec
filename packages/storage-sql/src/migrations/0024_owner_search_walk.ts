import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * PostgreSQL and PGlite: the owner's index in the default sort order also carries the searched
 * text (docs/storage/README.md, "Inventory at scale").
 *
 * A search inside one owner found its matches through the search index (migration 23) in about
 * 2 ms, then read every matching row from the table to sort them: the bench's 5,555 matches of
 * `host-1` for one owner sit on 5,052 pages, 12–13 ms at a million certificates. With
 * `search_text` as an INCLUDE column of `(owner_id, created_at, id)` the list reads the owner's
 * index entries alone (an index-only scan), tests the pattern on each, sorts the keys and reads
 * the table for the page's rows only. An index-only scan skips the table only for pages the
 * visibility map marks all-visible, which autovacuum (or VACUUM after a bulk import) maintains
 * (docs/operations/scaling.md).
 *
 * The covering index replaces migration 14's `(owner_id, created_at, id)`, which it serves in
 * full, so a write still maintains one owner index; `search_text` is already in the search
 * index, so no update that was HOT becomes non-HOT. MySQL/MariaDB have no INCLUDE columns.
 */
export const ownerSearchWalk: Migration = {
  version: 24,
  name: 'owner_search_walk',
  async up(db, t) {
    if (t.flavor !== 'postgres') return;
    await sql`create index ix_certs_owner_created_search on certificates
      (owner_id, created_at, id) include (search_text)`.execute(db);
    await sql`drop index ix_certs_owner_created`.execute(db);
  },
};
