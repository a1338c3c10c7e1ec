import type { Migration } from './types.js';

/**
 * Webhooks choose the notification types they receive and carry per-kind settings (chat id,
 * topic, priority); operator settings changed through the API (the webhook private-range
 * allowlist) get a table of their own. Existing webhooks receive every type, as before.
 */
export const webhookSettings: Migration = {
  version: 9,
  name: 'webhook_settings',
  async up(db, t) {
    await db.schema
      .alterTable('webhooks')
      .addColumn('events', 'varchar(1024)', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema
      .alterTable('webhooks')
      .addColumn('options', 'varchar(2048)', (c) => c.notNull().defaultTo('{}'))
      .execute();
    await db.schema
      .createTable('system_settings')
      .$call(t.table)
      .addColumn('name', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('value', t.text, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();
  },
};
