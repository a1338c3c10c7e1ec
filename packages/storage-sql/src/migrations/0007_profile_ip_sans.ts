import type { Migration } from './types.js';

/**
 * Whether a profile allows IP addresses on its certificates. Profiles stored before this
 * setting existed were made when every valid IP was accepted, so they keep allowing them
 * (default true); a profile created after it gets false unless it asks (docs/api/inventory.md).
 */
export const profileIpSans: Migration = {
  version: 7,
  name: 'profile_ip_sans',
  async up(db, t) {
    await db.schema
      .alterTable('certificate_profiles')
      .addColumn('allow_ip_sans', t.bool, (c) => c.notNull().defaultTo(true))
      .execute();
  },
};
