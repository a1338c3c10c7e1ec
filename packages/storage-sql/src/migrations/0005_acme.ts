import type { Migration } from './types.js';

const ID = 'varchar(128)';

/**
 * Enrollment settings on certificate profiles (shared by ACME, EST and SCEP) and the ACME
 * server's records: accounts, orders, authorizations, challenges and external-account-binding
 * keys (RFC 8555).
 */
export const acme: Migration = {
  version: 5,
  name: 'acme',
  async up(db, t) {
    // JSON of {enrollment, acme, est, scep …}; null reads as the defaults of every block.
    await db.schema.alterTable('certificate_profiles').addColumn('enrollment_settings', t.text).execute();
    // SecretBox-sealed JSON of the write-only protocol secrets.
    await db.schema
      .alterTable('certificate_profiles')
      .addColumn('enrollment_secrets_sealed', t.text)
      .execute();
    // One row per (protocol, path_id) in use: the primary key makes path ids unique per protocol.
    await db.schema
      .createTable('enrollment_paths')
      .$call(t.table)
      .addColumn('protocol', 'varchar(16)', (c) => c.notNull())
      .addColumn('path_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('profile_id', ID, (c) => c.notNull())
      .addPrimaryKeyConstraint('pk_enrollment_paths', ['protocol', 'path_id'])
      .addForeignKeyConstraint(
        'fk_enrollment_paths_profile',
        ['profile_id'],
        'certificate_profiles',
        ['id'],
        (c) => c.onDelete('cascade'),
      )
      .execute();

    await db.schema
      .createTable('acme_eab_keys')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('profile_id', ID, (c) => c.notNull())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('hmac_key_sealed', t.text, (c) => c.notNull())
      .addColumn('account_id', ID)
      .addColumn('bound_at', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_eab_profile', ['profile_id'], 'certificate_profiles', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('ix_eab_profile').on('acme_eab_keys').columns(['profile_id', 'id']).execute();

    await db.schema
      .createTable('acme_accounts')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('profile_id', ID, (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('jwk', t.text, (c) => c.notNull())
      .addColumn('jwk_thumbprint', 'varchar(64)', (c) => c.notNull())
      .addColumn('contact', t.text, (c) => c.notNull())
      .addColumn('terms_agreed', t.bool, (c) => c.notNull())
      .addColumn('eab_key_id', ID)
      .addColumn('created_ip', 'varchar(64)')
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      // One account per key per profile: key-change to a key in use is 409 by this constraint.
      .addUniqueConstraint('uq_acme_accounts_key', ['profile_id', 'jwk_thumbprint'])
      .addForeignKeyConstraint(
        'fk_acme_accounts_profile',
        ['profile_id'],
        'certificate_profiles',
        ['id'],
        (c) => c.onDelete('restrict'),
      )
      .execute();

    await db.schema
      .createTable('acme_orders')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('account_id', ID, (c) => c.notNull())
      .addColumn('profile_id', ID, (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('identifiers', t.text, (c) => c.notNull())
      .addColumn('not_before', t.ts)
      .addColumn('not_after', t.ts)
      .addColumn('expires', t.ts, (c) => c.notNull())
      .addColumn('error', t.text)
      .addColumn('acme_profile', 'varchar(64)')
      .addColumn('replaces', 'varchar(255)')
      .addColumn('certificate_id', ID)
      .addColumn('job_id', ID)
      .addColumn('version_id', ID)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_acme_orders_account', ['account_id'], 'acme_accounts', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .addForeignKeyConstraint(
        'fk_acme_orders_certificate',
        ['certificate_id'],
        'certificates',
        ['id'],
        (c) => c.onDelete('set null'),
      )
      .execute();
    await db.schema
      .createIndex('ix_acme_orders_account')
      .on('acme_orders')
      .columns(['account_id', 'id'])
      .execute();
    await db.schema
      .createIndex('ix_acme_orders_certificate')
      .on('acme_orders')
      .columns(['certificate_id'])
      .execute();

    await db.schema
      .createTable('acme_authorizations')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('order_id', ID, (c) => c.notNull())
      .addColumn('account_id', ID, (c) => c.notNull())
      .addColumn('identifier_type', 'varchar(8)', (c) => c.notNull())
      .addColumn('identifier_value', 'varchar(255)', (c) => c.notNull())
      .addColumn('wildcard', t.bool, (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('expires', t.ts, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_acme_authz_order', ['order_id'], 'acme_orders', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('ix_acme_authz_order')
      .on('acme_authorizations')
      .columns(['order_id'])
      .execute();

    await db.schema
      .createTable('acme_challenges')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('authorization_id', ID, (c) => c.notNull())
      .addColumn('type', 'varchar(16)', (c) => c.notNull())
      .addColumn('token', 'varchar(64)', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('validated_at', t.ts)
      .addColumn('error', t.text)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint(
        'fk_acme_chall_authz',
        ['authorization_id'],
        'acme_authorizations',
        ['id'],
        (c) => c.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('ix_acme_chall_authz')
      .on('acme_challenges')
      .columns(['authorization_id'])
      .execute();
  },
};
