import type { Migration } from './types.js';

/**
 * Every engine: an owner's certificates in name order (docs/storage/README.md, "Inventory at
 * scale").
 *
 * No index held both, so `owner_id` with `sort=name` walked the name index and skipped the
 * other owners' rows: cheap for the first page, but page 100 by offset read about 100,000 of
 * them at a million certificates and twenty owners (p50 27 ms, p99 up to 62 ms against a 50 ms
 * bar). Listing one's own certificates by name is the console's everyday view, so it gets the
 * index the other owner sorts already had; the cost is one more b-tree entry per certificate
 * written.
 */
export const ownerNameOrder: Migration = {
  version: 25,
  name: 'owner_name_order',
  async up(db) {
    await db.schema
      .createIndex('ix_certs_owner_name')
      .on('certificates')
      .columns(['owner_id', 'name', 'id'])
      .execute();
  },
};
