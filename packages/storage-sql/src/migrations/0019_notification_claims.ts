import type { Migration } from './types.js';

/**
 * A delivery attempt claims its notification event before sending (`claimed_until`, a lease):
 * the sweep of every instance and the queue's immediate-delivery job read the same pending
 * and due events, and only the one whose conditional UPDATE changed the row sends it. The
 * column is storage bookkeeping, not part of the event the API shows; a status write clears
 * it, and a lease left by a process that died mid-send simply expires
 * (docs/notifications/webhooks.md, delivery semantics).
 */
export const notificationClaims: Migration = {
  version: 19,
  name: 'notification_claims',
  async up(db, t) {
    await db.schema.alterTable('notification_events').addColumn('claimed_until', t.ts).execute();
  },
};
