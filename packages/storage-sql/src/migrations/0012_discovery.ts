import type { Migration } from './types.js';

const ID = 'varchar(128)';

/** Network scan targets, scan runs, discovered certificates with their sightings, endpoint health checks. */
export const discovery: Migration = {
  version: 12,
  name: 'discovery',
  async up(db, t) {
    await db.schema
      .createTable('scan_targets')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('cidrs', t.text, (c) => c.notNull())
      .addColumn('hosts', t.text, (c) => c.notNull())
      .addColumn('ports', t.text, (c) => c.notNull())
      .addColumn('sni_names', t.text, (c) => c.notNull())
      .addColumn('interval_seconds', 'integer', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('last_scan_at', t.ts)
      .addColumn('next_scan_at', t.ts)
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ix_scan_targets_due').on('scan_targets').columns(['next_scan_at']).execute();

    await db.schema
      .createTable('discovery_scans')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('target_id', ID)
      .addColumn('source', 'varchar(128)', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('started_at', t.ts, (c) => c.notNull())
      .addColumn('finished_at', t.ts)
      .addColumn('endpoints_total', 'integer', (c) => c.notNull())
      .addColumn('endpoints_tls', 'integer', (c) => c.notNull())
      .addColumn('certificates_found', 'integer', (c) => c.notNull())
      .addColumn('certificates_new', 'integer', (c) => c.notNull())
      .addColumn('errors_count', 'integer', (c) => c.notNull())
      .addColumn('errors', t.text, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ix_discovery_scans_started')
      .on('discovery_scans')
      .columns(['started_at', 'id'])
      .execute();

    await db.schema
      .createTable('discovered_certificates')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('fingerprint_sha256', 'varchar(64)', (c) => c.notNull().unique())
      .addColumn('subject', 'varchar(1024)', (c) => c.notNull())
      .addColumn('issuer', 'varchar(1024)', (c) => c.notNull())
      .addColumn('serial_number', 'varchar(130)', (c) => c.notNull())
      .addColumn('sans', t.text, (c) => c.notNull())
      .addColumn('not_before', t.ts, (c) => c.notNull())
      .addColumn('not_after', t.ts, (c) => c.notNull())
      .addColumn('key_algorithm', 'varchar(32)', (c) => c.notNull())
      .addColumn('key_size', 'integer', (c) => c.notNull())
      .addColumn('signature_algorithm', 'varchar(64)', (c) => c.notNull())
      .addColumn('self_signed', t.bool, (c) => c.notNull())
      .addColumn('cert_pem', t.text, (c) => c.notNull())
      .addColumn('chain_pem', t.text, (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('certificate_id', ID)
      .addColumn('first_seen_at', t.ts, (c) => c.notNull())
      .addColumn('last_seen_at', t.ts, (c) => c.notNull())
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ix_discovered_not_after')
      .on('discovered_certificates')
      .columns(['not_after', 'id'])
      .execute();

    await db.schema
      .createTable('discovery_sightings')
      .$call(t.table)
      .addColumn('discovered_id', ID, (c) => c.notNull())
      // SHA-256 of the location (source, address, port, SNI, path): one row per place seen.
      .addColumn('location_key', 'varchar(64)', (c) => c.notNull())
      .addColumn('source', 'varchar(128)', (c) => c.notNull())
      .addColumn('scan_id', ID)
      .addColumn('address', 'varchar(255)')
      .addColumn('port', 'integer')
      .addColumn('sni', 'varchar(255)')
      .addColumn('path', 'varchar(1024)')
      .addColumn('first_seen_at', t.ts, (c) => c.notNull())
      .addColumn('last_seen_at', t.ts, (c) => c.notNull())
      .addPrimaryKeyConstraint('pk_discovery_sightings', ['discovered_id', 'location_key'])
      .execute();
    await db.schema
      .createIndex('ix_discovery_sightings_address')
      .on('discovery_sightings')
      .columns(['address', 'port'])
      .execute();

    await db.schema
      .createTable('health_checks')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('host', 'varchar(255)', (c) => c.notNull())
      .addColumn('port', 'integer', (c) => c.notNull())
      .addColumn('sni', 'varchar(255)')
      .addColumn('expected_fingerprint', 'varchar(64)')
      .addColumn('certificate_id', ID)
      .addColumn('interval_seconds', 'integer', (c) => c.notNull())
      .addColumn('deployment_window_seconds', 'integer', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('consecutive_failures', 'integer', (c) => c.notNull())
      .addColumn('last_checked_at', t.ts)
      .addColumn('next_check_at', t.ts)
      .addColumn('last_success_at', t.ts)
      .addColumn('last_failure_at', t.ts)
      .addColumn('last_error', t.text)
      .addColumn('status_changed_at', t.ts, (c) => c.notNull())
      .addColumn('observed', t.text)
      .addColumn('handshake_ms', 'double precision')
      .addColumn('tls_version', 'varchar(16)')
      .addColumn('cipher', 'varchar(128)')
      .addColumn('acknowledged_at', t.ts)
      .addColumn('acknowledged_by', 'varchar(255)')
      .addColumn('created_at', t.ts, (c) => c.notNull())
      .addColumn('updated_at', t.ts, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ix_health_checks_due')
      .on('health_checks')
      .columns(['next_check_at'])
      .execute();
    await db.schema
      .createIndex('ix_health_checks_certificate')
      .on('health_checks')
      .columns(['certificate_id'])
      .execute();

    await db.schema
      .createTable('health_check_results')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('check_id', ID, (c) => c.notNull())
      .addColumn('checked_at', t.ts, (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('success', t.bool, (c) => c.notNull())
      .addColumn('fingerprint_sha256', 'varchar(64)')
      .addColumn('tls_version', 'varchar(16)')
      .addColumn('cipher', 'varchar(128)')
      .addColumn('handshake_ms', 'double precision')
      .addColumn('error', t.text)
      .execute();
    await db.schema
      .createIndex('ix_health_results_check')
      .on('health_check_results')
      .columns(['check_id', 'checked_at'])
      .execute();
    await db.schema
      .createIndex('ix_health_results_checked')
      .on('health_check_results')
      .columns(['checked_at'])
      .execute();
  },
};
