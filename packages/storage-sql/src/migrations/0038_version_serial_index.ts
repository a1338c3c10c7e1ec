import type { Migration } from './types.js';

/**
 * Certificates found by serial number alone (the inventory's `serial` filter, the console's
 * search): the unique (issuer_id, serial_number) index cannot serve a lookup without the issuer.
 * An index only (expand): servers of the previous release run unchanged beside it.
 */
export const versionSerialIndex: Migration = {
  version: 38,
  name: 'version_serial_index',
  async up(db) {
    await db.schema
      .createIndex('ix_versions_serial')
      .on('certificate_versions')
      .column('serial_number')
      .execute();
  },
};
