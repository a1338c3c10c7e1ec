import type { Migration } from './types.js';

/**
 * Notifications no configured channel could deliver have their own status, `undeliverable`
 * (docs/api/notifications.md). Earlier releases marked them `sent` with a note in `last_error`:
 * a channel that did not exist, a deleted webhook ("… resolved as sent without delivery") or a
 * disabled one ("… is disabled; not delivered"). Those rows move to `undeliverable`, so the
 * dashboard counts them and nobody reads them as delivered.
 */
export const undeliverableNotifications: Migration = {
  version: 29,
  name: 'undeliverable_notifications',
  async up(db) {
    await db
      .updateTable('notification_events')
      .set({ status: 'undeliverable', sent_at: null })
      .where('status', '=', 'sent')
      .where((eb) =>
        eb.or([
          eb('last_error', 'like', '%resolved as sent without delivery'),
          eb('last_error', 'like', '%is disabled; not delivered'),
        ]),
      )
      .execute();
  },
};
