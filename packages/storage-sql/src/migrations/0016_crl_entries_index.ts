import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * An index the CRL build reads alone (RFC 5280 §5.1.2.6 lists, per revoked certificate, its
 * serial, revocation date and entry extensions — reason and invalidity date): revoked versions
 * of an issuer in serial order with those columns, so the keyset pages of
 * `streamRevokedEntries` neither visit the live versions nor fetch rows carrying PEM columns.
 * PostgreSQL/PGlite: a partial covering index (revoked rows only). MySQL/MariaDB, which have
 * no partial indexes: a composite index over the same columns, which InnoDB reads as covering.
 */
export const crlEntriesIndex: Migration = {
  version: 16,
  name: 'crl_entries_index',
  async up(db, t) {
    if (t.flavor === 'mysql') {
      await db.schema
        .createIndex('ix_versions_crl')
        .on('certificate_versions')
        .columns(['issuer_id', 'serial_number', 'revoked_at', 'revocation_reason', 'invalidity_date'])
        .execute();
      return;
    }
    await sql`create index ix_versions_crl on certificate_versions (issuer_id, serial_number)
      include (revoked_at, revocation_reason, invalidity_date) where revoked_at is not null`.execute(db);
  },
};
