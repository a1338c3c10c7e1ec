import type { Migration } from './types.js';

/**
 * The keyring's own state (docs/operations/key-rotation.md), one row per name: the audit chain
 * key sealed under the encryption key (so the chain outlives a rotation of that key), the sealed
 * format this database's instances write, and the progress of a re-seal. An expand-only step:
 * release 2.0.0 never reads the table, so both run on one database during an upgrade.
 */
export const keyring: Migration = {
  version: 34,
  name: 'keyring',
  async up(db, t) {
    await db.schema
      .createTable('cw_keyring')
      .$call(t.table)
      .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('value', t.text, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();
  },
};
