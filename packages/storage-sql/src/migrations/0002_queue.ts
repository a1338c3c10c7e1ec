import type { Migration } from './types.js';

/** The SQL implementation of the Queue port. */
export const queue: Migration = {
  version: 2,
  name: 'queue',
  async up(db, t) {
    await db.schema
      .createTable('queue_jobs')
      .$call(t.table)
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('topic', 'varchar(128)', (c) => c.notNull())
      .addColumn('payload', t.text, (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('run_at', t.ts, (c) => c.notNull())
      .addColumn('dedupe_key', 'varchar(255)')
      .addColumn('dedupe_active', 'varchar(400)')
      .addColumn('last_error', t.text)
      .addColumn('lease_id', 'varchar(64)')
      .addColumn('lease_expires_at', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_queue_dedupe_active', ['dedupe_active'])
      .execute();
    await db.schema
      .createIndex('ix_queue_due')
      .on('queue_jobs')
      .columns(['topic', 'state', 'run_at'])
      .execute();
    await db.schema.createIndex('ix_queue_dead').on('queue_jobs').columns(['state', 'updated_at']).execute();
  },
};
