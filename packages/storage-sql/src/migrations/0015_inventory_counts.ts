import type { Migration } from './types.js';

/**
 * Indexes for the bounded counts of the certificate list and the dashboard at a million
 * certificates (docs/storage/README.md, "Inventory at scale"), on every engine.
 *
 * A list filtered by owner, team or issuer and by status reads its first page in order through
 * `(owner_id, created_at, id)` and friends, testing the status of each row; its total, though,
 * counts up to 1,001 matches, and without an index holding both columns the database reads
 * (and discards) every row of the owner that has another status to find them — tens of
 * thousands of rows. `(column, status)` answers that count from the index alone, for one status
 * or several (one range each).
 */
export const inventoryCounts: Migration = {
  version: 15,
  name: 'inventory_counts',
  async up(db) {
    for (const [name, columns] of [
      ['ix_certs_owner_status', ['owner_id', 'status']],
      ['ix_certs_team_status', ['team_id', 'status']],
      ['ix_certs_issuer_status', ['issuer_id', 'status']],
    ] as const) {
      await db.schema
        .createIndex(name)
        .on('certificates')
        .columns([...columns])
        .execute();
    }
  },
};
