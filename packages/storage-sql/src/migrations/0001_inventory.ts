import type { Migration } from './types.js';

const ID = 'varchar(128)';

/** Inventory, agents, jobs, notifications, webhooks and the audit chain. */
export const inventory: Migration = {
  version: 1,
  name: 'inventory',
  async up(db, t) {
    await db.schema
      .createTable('owners')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('email', 'varchar(320)')
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('teams')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('description', t.text)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_teams_name', ['name'])
      .execute();

    await db.schema
      .createTable('issuers')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('type', 'varchar(32)', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('config_sealed', t.text, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_issuers_name', ['name'])
      .execute();

    await db.schema
      .createTable('certificate_profiles')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('description', t.text)
      .addColumn('allowed_key_algorithms', t.text, (c) => c.notNull())
      .addColumn('allowed_ekus', t.text, (c) => c.notNull())
      .addColumn('required_csr_attributes', t.text, (c) => c.notNull())
      .addColumn('must_staple', t.bool, (c) => c.notNull())
      .addColumn('max_validity_days', 'integer', (c) => c.notNull())
      .addColumn('key_generation', 'varchar(16)', (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_profiles_name', ['name'])
      .execute();

    await db.schema
      .createTable('renewal_policies')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('renewal_window_days', 'integer', (c) => c.notNull())
      .addColumn('max_retries', 'integer')
      .addColumn('retry_interval_seconds', 'integer', (c) => c.notNull())
      .addColumn('alert_thresholds_days', 'varchar(2048)', (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_renewal_policies_name', ['name'])
      .execute();

    await db.schema
      .createTable('policy_rules')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('type', 'varchar(32)', (c) => c.notNull())
      .addColumn('severity', 'varchar(16)', (c) => c.notNull())
      .addColumn('config', t.text)
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('description', t.text)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('agents')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('hostname', 'varchar(255)', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('last_heartbeat_at', t.ts)
      .addColumn('registered_at', t.ts, (c) => c.notNull())
      .addColumn('os', 'varchar(64)', (c) => c.notNull())
      .addColumn('architecture', 'varchar(64)', (c) => c.notNull())
      .addColumn('ip_address', 'varchar(64)', (c) => c.notNull())
      .addColumn('version', 'varchar(64)', (c) => c.notNull())
      .addColumn('api_key_hash', 'varchar(128)')
      .addColumn('retired_at', t.ts)
      .addColumn('retired_reason', t.text)
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_agents_api_key_hash', ['api_key_hash'])
      .execute();

    await db.schema
      .createTable('deployment_targets')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('agent_id', ID, (c) => c.notNull())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('type', 'varchar(32)', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('config_sealed', t.text, (c) => c.notNull())
      .addColumn('retired_at', t.ts)
      .addColumn('retired_reason', t.text)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_targets_agent', ['agent_id'], 'agents', ['id'], (c) =>
        c.onDelete('restrict'),
      )
      .execute();
    await db.schema
      .createIndex('ix_targets_agent')
      .on('deployment_targets')
      .columns(['agent_id', 'retired_at'])
      .execute();

    await db.schema
      .createTable('certificates')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('common_name', 'varchar(255)', (c) => c.notNull())
      .addColumn('sans', t.text, (c) => c.notNull())
      .addColumn('status', 'varchar(32)', (c) => c.notNull())
      .addColumn('source', 'varchar(16)', (c) => c.notNull())
      .addColumn('issuer_id', ID, (c) => c.notNull())
      .addColumn('owner_id', ID, (c) => c.notNull())
      .addColumn('team_id', ID, (c) => c.notNull())
      .addColumn('renewal_policy_id', ID, (c) => c.notNull())
      .addColumn('profile_id', ID)
      .addColumn('environment', 'varchar(64)')
      .addColumn('metadata', t.text, (c) => c.notNull())
      .addColumn('tags', t.text, (c) => c.notNull())
      .addColumn('search_text', t.text, (c) => c.notNull())
      .addColumn('current_version_id', ID)
      .addColumn('expires_at', t.ts)
      .addColumn('last_renewal_at', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_certs_issuer', ['issuer_id'], 'issuers', ['id'], (c) =>
        c.onDelete('restrict'),
      )
      .addForeignKeyConstraint('fk_certs_owner', ['owner_id'], 'owners', ['id'], (c) =>
        c.onDelete('restrict'),
      )
      .addForeignKeyConstraint('fk_certs_team', ['team_id'], 'teams', ['id'], (c) => c.onDelete('restrict'))
      .addForeignKeyConstraint(
        'fk_certs_renewal_policy',
        ['renewal_policy_id'],
        'renewal_policies',
        ['id'],
        (c) => c.onDelete('restrict'),
      )
      .addForeignKeyConstraint('fk_certs_profile', ['profile_id'], 'certificate_profiles', ['id'], (c) =>
        c.onDelete('restrict'),
      )
      .execute();
    // Each list filter leads with its column and ends with id so equal keys page stably.
    for (const [name, columns] of [
      ['ix_certs_status', ['status', 'expires_at']],
      ['ix_certs_issuer', ['issuer_id', 'id']],
      ['ix_certs_owner', ['owner_id', 'id']],
      ['ix_certs_team', ['team_id', 'id']],
      ['ix_certs_profile', ['profile_id', 'id']],
      ['ix_certs_policy_expiry', ['renewal_policy_id', 'expires_at']],
      ['ix_certs_expires', ['expires_at']],
      ['ix_certs_created', ['created_at', 'id']],
      ['ix_certs_name', ['name', 'id']],
    ] as const) {
      await db.schema
        .createIndex(name)
        .on('certificates')
        .columns([...columns])
        .execute();
    }

    await db.schema
      .createTable('certificate_versions')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('certificate_id', ID, (c) => c.notNull())
      .addColumn('issuer_id', ID, (c) => c.notNull())
      .addColumn('serial_number', 'varchar(64)', (c) => c.notNull())
      .addColumn('fingerprint_sha256', 'varchar(64)', (c) => c.notNull())
      .addColumn('key_algorithm', 'varchar(32)', (c) => c.notNull())
      .addColumn('key_size', 'integer', (c) => c.notNull())
      .addColumn('subject', 'varchar(1024)', (c) => c.notNull())
      .addColumn('issued_at', t.ts, (c) => c.notNull())
      .addColumn('not_before', t.ts, (c) => c.notNull())
      .addColumn('not_after', t.ts, (c) => c.notNull())
      .addColumn('csr_pem', t.text)
      .addColumn('cert_pem', t.text, (c) => c.notNull())
      .addColumn('chain_pem', t.text, (c) => c.notNull())
      .addColumn('private_key_sealed', t.text)
      .addColumn('revoked_at', t.ts)
      .addColumn('revocation_reason', 'varchar(32)')
      .addColumn('invalidity_date', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addUniqueConstraint('uq_versions_issuer_serial', ['issuer_id', 'serial_number'])
      .addForeignKeyConstraint('fk_versions_cert', ['certificate_id'], 'certificates', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .addForeignKeyConstraint('fk_versions_issuer', ['issuer_id'], 'issuers', ['id'], (c) =>
        c.onDelete('restrict'),
      )
      .execute();
    await db.schema
      .createIndex('ix_versions_cert')
      .on('certificate_versions')
      .columns(['certificate_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('ix_versions_revoked')
      .on('certificate_versions')
      .columns(['issuer_id', 'revoked_at'])
      .execute();
    await db.schema
      .createIndex('ix_versions_fingerprint')
      .on('certificate_versions')
      .columns(['fingerprint_sha256'])
      .execute();

    await db.schema
      .createTable('certificate_targets')
      .$call(t.table)
      .addColumn('certificate_id', ID, (c) => c.notNull())
      .addColumn('target_id', ID, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addPrimaryKeyConstraint('pk_certificate_targets', ['certificate_id', 'target_id'])
      .addForeignKeyConstraint('fk_ct_cert', ['certificate_id'], 'certificates', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .addForeignKeyConstraint('fk_ct_target', ['target_id'], 'deployment_targets', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('ix_ct_target').on('certificate_targets').columns(['target_id']).execute();

    await db.schema
      .createTable('policy_violations')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('rule_id', ID, (c) => c.notNull())
      .addColumn('rule_type', 'varchar(32)', (c) => c.notNull())
      .addColumn('certificate_id', ID, (c) => c.notNull())
      .addColumn('severity', 'varchar(16)', (c) => c.notNull())
      .addColumn('message', t.text, (c) => c.notNull())
      .addColumn('detected_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_violations_rule', ['rule_id'], 'policy_rules', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .addForeignKeyConstraint('fk_violations_cert', ['certificate_id'], 'certificates', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('ix_violations_cert')
      .on('policy_violations')
      .columns(['certificate_id'])
      .execute();
    await db.schema.createIndex('ix_violations_rule').on('policy_violations').columns(['rule_id']).execute();

    await db.schema
      .createTable('jobs')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('type', 'varchar(16)', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('certificate_id', ID)
      .addColumn('target_id', ID)
      .addColumn('agent_id', ID)
      .addColumn('payload', t.text, (c) => c.notNull())
      .addColumn('result', t.text)
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('last_error', t.text)
      .addColumn('csr_pem', t.text)
      .addColumn('scheduled_at', t.ts, (c) => c.notNull())
      .addColumn('started_at', t.ts)
      .addColumn('completed_at', t.ts)
      .addColumn('locked_by', 'varchar(255)')
      .addColumn('lease_expires_at', t.ts)
      .addColumn('verification_status', 'varchar(16)')
      .addColumn('verification_detail', t.text)
      .addColumn('verified_at', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_jobs_cert', ['certificate_id'], 'certificates', ['id'], (c) =>
        c.onDelete('cascade'),
      )
      .addForeignKeyConstraint('fk_jobs_target', ['target_id'], 'deployment_targets', ['id'], (c) =>
        c.onDelete('set null'),
      )
      .addForeignKeyConstraint('fk_jobs_agent', ['agent_id'], 'agents', ['id'], (c) => c.onDelete('set null'))
      .execute();
    await db.schema.createIndex('ix_jobs_due').on('jobs').columns(['status', 'scheduled_at']).execute();
    await db.schema.createIndex('ix_jobs_agent').on('jobs').columns(['agent_id', 'status']).execute();
    await db.schema.createIndex('ix_jobs_cert').on('jobs').columns(['certificate_id', 'status']).execute();
    await db.schema.createIndex('ix_jobs_target').on('jobs').columns(['target_id']).execute();

    await db.schema
      .createTable('notification_events')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('type', 'varchar(32)', (c) => c.notNull())
      .addColumn('channel', 'varchar(128)', (c) => c.notNull())
      .addColumn('recipient', 'varchar(1024)', (c) => c.notNull())
      .addColumn('subject', 'varchar(1024)', (c) => c.notNull())
      .addColumn('message', t.text, (c) => c.notNull())
      .addColumn('certificate_id', ID)
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('retry_count', 'integer', (c) => c.notNull())
      .addColumn('next_retry_at', t.ts)
      .addColumn('last_error', t.text)
      .addColumn('sent_at', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .addForeignKeyConstraint('fk_notifications_cert', ['certificate_id'], 'certificates', ['id'], (c) =>
        c.onDelete('set null'),
      )
      .execute();
    await db.schema
      .createIndex('ix_notifications_retry')
      .on('notification_events')
      .columns(['status', 'next_retry_at'])
      .execute();
    await db.schema
      .createIndex('ix_notifications_created')
      .on('notification_events')
      .columns(['created_at'])
      .execute();
    await db.schema
      .createIndex('ix_notifications_cert')
      .on('notification_events')
      .columns(['certificate_id'])
      .execute();

    await db.schema
      .createTable('webhooks')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('url', t.text, (c) => c.notNull())
      .addColumn('method', 'varchar(8)', (c) => c.notNull())
      .addColumn('service', 'varchar(32)', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('template', t.text, (c) => c.notNull())
      .addColumn('header_names', t.text, (c) => c.notNull())
      .addColumn('headers_sealed', t.text, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('audit_events')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('seq', t.bigint, (c) => c.notNull())
      .addColumn('actor', 'varchar(255)', (c) => c.notNull())
      .addColumn('actor_type', 'varchar(16)', (c) => c.notNull())
      .addColumn('action', 'varchar(128)', (c) => c.notNull())
      .addColumn('resource_type', 'varchar(64)', (c) => c.notNull())
      .addColumn('resource_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('category', 'varchar(32)', (c) => c.notNull())
      .addColumn('details', t.text, (c) => c.notNull())
      .addColumn('occurred_at', t.ts, (c) => c.notNull())
      .addColumn('prev_hash', 'char(64)', (c) => c.notNull())
      .addColumn('hash', 'char(64)', (c) => c.notNull())
      .addUniqueConstraint('uq_audit_seq', ['seq'])
      .execute();
    await db.schema.createIndex('ix_audit_time').on('audit_events').columns(['occurred_at', 'seq']).execute();
    await db.schema
      .createIndex('ix_audit_category')
      .on('audit_events')
      .columns(['category', 'occurred_at'])
      .execute();
    await db.schema.createIndex('ix_audit_resource').on('audit_events').columns(['resource_id']).execute();

    await db.schema
      .createTable('audit_head')
      .$call(t.table)
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('last_seq', t.bigint, (c) => c.notNull())
      .addColumn('last_hash', 'char(64)', (c) => c.notNull())
      .execute();
    await db
      .insertInto('audit_head')
      .values({ id: 1, last_seq: 0, last_hash: '0'.repeat(64) })
      .execute();
  },
};
