import type { Migration } from './types.js';

const ID = 'varchar(128)';

/**
 * Users, custom roles and their assignments, server-side sessions and OIDC group → role
 * mappings (docs/auth/). Role names are unique per tenant; a deleted user takes their sessions
 * and assignments along.
 */
export const people: Migration = {
  version: 11,
  name: 'people',
  async up(db, t) {
    await db.schema
      .createTable('auth_users')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('tenant_id', ID, (c) => c.notNull())
      .addColumn('subject', 'varchar(255)', (c) => c.notNull())
      // '' for local users: NULL would not take part in the unique constraint on either engine.
      .addColumn('provider_key', ID, (c) => c.notNull())
      .addColumn('email', 'varchar(320)')
      .addColumn('display_name', 'varchar(255)')
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('last_login_at', t.ts)
      .addColumn('deactivated_at', t.ts)
      .addUniqueConstraint('uq_auth_users_subject', ['tenant_id', 'provider_key', 'subject'])
      .execute();

    await db.schema
      .createTable('auth_roles')
      .$call(t.table)
      .addColumn('tenant_id', ID, (c) => c.notNull())
      .addColumn('name', 'varchar(64)', (c) => c.notNull())
      .addColumn('description', 'varchar(1024)', (c) => c.notNull())
      .addColumn('permissions', t.text, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addPrimaryKeyConstraint('pk_auth_roles', ['tenant_id', 'name'])
      .execute();

    // Built-in role names are not rows, so assignments name roles without a foreign key.
    await db.schema
      .createTable('auth_user_roles')
      .$call(t.table)
      .addColumn('user_id', ID, (c) => c.notNull())
      .addColumn('role', 'varchar(64)', (c) => c.notNull())
      .addPrimaryKeyConstraint('pk_auth_user_roles', ['user_id', 'role'])
      .addForeignKeyConstraint('fk_auth_user_roles_user', ['user_id'], 'auth_users', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();

    await db.schema
      .createTable('auth_sessions')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
      .addColumn('user_id', ID, (c) => c.notNull())
      .addColumn('tenant_id', ID, (c) => c.notNull())
      .addColumn('auth_method', 'varchar(16)', (c) => c.notNull())
      .addColumn('provider_id', ID)
      .addColumn('oidc_sid', 'varchar(255)')
      .addColumn('groups', t.text, (c) => c.notNull())
      .addColumn('ip_address', 'varchar(64)')
      .addColumn('user_agent', 'varchar(512)')
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('last_seen_at', t.ts, (c) => c.notNull())
      .addColumn('expires_at', t.ts, (c) => c.notNull())
      .addColumn('idle_expires_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_auth_sessions_user', ['user_id'], 'auth_users', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('ix_auth_sessions_user').on('auth_sessions').columns(['user_id']).execute();
    await db.schema
      .createIndex('ix_auth_sessions_sid')
      .on('auth_sessions')
      .columns(['provider_id', 'oidc_sid'])
      .execute();
    await db.schema
      .createIndex('ix_auth_sessions_idle')
      .on('auth_sessions')
      .columns(['idle_expires_at'])
      .execute();

    await db.schema
      .createTable('auth_oidc_group_mappings')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('tenant_id', ID, (c) => c.notNull())
      .addColumn('provider_id', ID, (c) => c.notNull())
      .addColumn('group_name', 'varchar(255)', (c) => c.notNull())
      .addColumn('role', 'varchar(64)', (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_auth_oidc_group_mappings', ['tenant_id', 'provider_id', 'group_name', 'role'])
      .execute();
  },
};
