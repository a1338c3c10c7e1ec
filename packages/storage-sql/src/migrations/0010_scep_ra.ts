import type { Migration } from './types.js';

/**
 * The SCEP server's registration authority per profile (RFC 8894 §2.2): the RSA certificate
 * clients encrypt their requests to, its sealed key, and the one it replaced (still decrypting
 * requests made with the old GetCACert answer until it expires).
 */
export const scepRa: Migration = {
  version: 10,
  name: 'scep_ra',
  async up(db, t) {
    await db.schema
      .createTable('scep_ra_certificates')
      .$call(t.table)
      .addColumn('profile_id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('issuer_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('certificate_pem', t.text, (c) => c.notNull())
      .addColumn('fingerprint_sha256', 'varchar(64)', (c) => c.notNull())
      .addColumn('private_key_sealed', t.text, (c) => c.notNull())
      .addColumn('not_before', t.ts, (c) => c.notNull())
      .addColumn('not_after', t.ts, (c) => c.notNull())
      .addColumn('previous_certificate_pem', t.text)
      .addColumn('previous_private_key_sealed', t.text)
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_scep_ra_profile', ['profile_id'], 'certificate_profiles', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
  },
};
