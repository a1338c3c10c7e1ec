import type { Migration } from './types.js';

/**
 * One row sealed under the encryption key at the first start and opened at every start, so a
 * server holding another key refuses to start instead of failing on the first sealed secret
 * it reads (see the reference server's start-up checks in docs/operations/configuration.md).
 */
export const keyCheck: Migration = {
  version: 4,
  name: 'key_check',
  async up(db, t) {
    await db.schema
      .createTable('cw_key_check')
      .$call(t.table)
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('sealed', t.text, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .execute();
  },
};
