import type { Migration } from './types.js';

/**
 * A profile's short-lived threshold (RFC 9608): certificates issued under it whose lifetime
 * is at most this many hours carry noRevAvail and no CRL or OCSP pointers. Null (every
 * existing profile): none are short-lived, as before.
 */
export const profileShortLived: Migration = {
  version: 37,
  name: 'profile_short_lived',
  async up(db) {
    await db.schema
      .alterTable('certificate_profiles')
      .addColumn('short_lived_validity_hours', 'integer')
      .execute();
  },
};
