import type { Migration } from './types.js';

/**
 * Webhook URLs are sealed at rest like header values: for chat and push kinds the URL carries
 * the token. `url_sealed` holds the URL under the service key; `url` keeps only what may be
 * shown (the origin, the path and query masked). The migration never sees the key: the start
 * that migrates seals every row whose `url_sealed` is still empty, under the migration lock and
 * before serving, and every later start does the same for any row left so (sealWebhookUrls).
 */
export const webhookUrlSealed: Migration = {
  version: 28,
  name: 'webhook_url_sealed',
  async up(db, t) {
    await db.schema.alterTable('webhooks').addColumn('url_sealed', t.text).execute();
  },
};
