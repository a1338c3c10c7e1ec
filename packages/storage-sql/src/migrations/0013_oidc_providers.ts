import type { Migration } from './types.js';

/**
 * OpenID Providers the service signs users in with (client secret sealed, docs/auth/oidc.md)
 * and break-glass credentials (scrypt hashes, docs/auth/breakglass.md).
 */
export const oidcProviders: Migration = {
  version: 13,
  name: 'oidc_providers',
  async up(db, t) {
    await db.schema
      .createTable('auth_oidc_providers')
      .$call(t.table)
      .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('tenant_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('issuer', 'varchar(2048)', (c) => c.notNull())
      .addColumn('client_id', 'varchar(512)', (c) => c.notNull())
      .addColumn('client_secret_sealed', t.text)
      .addColumn('scopes', t.text, (c) => c.notNull())
      .addColumn('groups_claim', 'varchar(255)', (c) => c.notNull())
      .addColumn('email_claim', 'varchar(255)', (c) => c.notNull())
      .addColumn('name_claim', 'varchar(255)', (c) => c.notNull())
      .addColumn('redirect_uri', 'varchar(2048)', (c) => c.notNull())
      .addColumn('post_login_url', 'varchar(2048)', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_auth_oidc_providers_name', ['tenant_id', 'name'])
      .execute();

    await db.schema
      .createTable('auth_breakglass_credentials')
      .$call(t.table)
      .addColumn('actor_id', 'varchar(255)', (c) => c.primaryKey())
      .addColumn('user_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addColumn('last_used_at', t.ts)
      .addForeignKeyConstraint('fk_auth_breakglass_user', ['user_id'], 'auth_users', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
  },
};
