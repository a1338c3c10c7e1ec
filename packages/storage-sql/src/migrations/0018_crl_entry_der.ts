import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * Each revoked version keeps the DER of its CRL entry (RFC 5280 §5.1.2.6: serial, revocation
 * date, reasonCode and invalidityDate extensions), so a CRL rebuild concatenates stored bytes
 * instead of reading four columns and encoding a million entries. The column is filled by the
 * CRL build the first time it meets the revoked version (`streamCrlEntryBlocks`), which also
 * covers the rows revoked before this migration; it never changes afterwards, as a version
 * keeps its first revocation. An entry is at most 82 octets, hence varbinary(128) on MySQL.
 *
 * The CRL index is rebuilt to carry the column: on PostgreSQL/PGlite a partial index of
 * revoked rows on `(issuer_id, serial_number)` including the DER and the three revocation
 * columns (index-only pages for the build, and for `streamRevokedEntries` as before); on
 * MySQL/MariaDB, which have no partial indexes, a composite index over all six columns. It
 * replaces `ix_versions_crl` (migration 0016), whose columns it covers.
 */
export const crlEntryDer: Migration = {
  version: 18,
  name: 'crl_entry_der',
  async up(db, t) {
    if (t.flavor === 'mysql') {
      await db.schema
        .alterTable('certificate_versions')
        .addColumn('crl_entry', sql`varbinary(128)`)
        .execute();
      await db.schema
        .createIndex('ix_versions_crl_entries')
        .on('certificate_versions')
        .columns([
          'issuer_id',
          'serial_number',
          'revoked_at',
          'revocation_reason',
          'invalidity_date',
          'crl_entry',
        ])
        .execute();
      await db.schema.dropIndex('ix_versions_crl').on('certificate_versions').execute();
      return;
    }
    await db.schema.alterTable('certificate_versions').addColumn('crl_entry', sql`bytea`).execute();
    await sql`create index ix_versions_crl_entries on certificate_versions (issuer_id, serial_number)
      include (crl_entry, revoked_at, revocation_reason, invalidity_date) where revoked_at is not null`.execute(
      db,
    );
    await sql`drop index ix_versions_crl`.execute(db);
  },
};
