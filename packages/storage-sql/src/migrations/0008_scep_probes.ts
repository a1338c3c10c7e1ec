import type { Migration } from './types.js';

const ID = 'varchar(128)';

/**
 * SCEP probe results (docs/protocols/scep-probe.md): one row per probe, read newest first.
 * The URL is a caller's text up to 2048 characters, so it is `text`; subjects and issuers are
 * RFC 4514 strings of any length a certificate holds.
 */
export const scepProbes: Migration = {
  version: 8,
  name: 'scep_probes',
  async up(db, t) {
    await db.schema
      .createTable('scep_probes')
      .$call(t.table)
      .addColumn('id', ID, (c) => c.primaryKey())
      .addColumn('url', t.text, (c) => c.notNull())
      .addColumn('reachable', t.bool, (c) => c.notNull())
      .addColumn('capabilities', t.text, (c) => c.notNull())
      .addColumn('supports_rfc8894', t.bool, (c) => c.notNull())
      .addColumn('supports_aes', t.bool, (c) => c.notNull())
      .addColumn('supports_post', t.bool, (c) => c.notNull())
      .addColumn('supports_renewal', t.bool, (c) => c.notNull())
      .addColumn('supports_sha256', t.bool, (c) => c.notNull())
      .addColumn('supports_sha512', t.bool, (c) => c.notNull())
      .addColumn('ca_subject', t.text)
      .addColumn('ca_issuer', t.text)
      .addColumn('ca_not_before', t.ts)
      .addColumn('ca_not_after', t.ts)
      .addColumn('key_algorithm', 'varchar(128)')
      .addColumn('chain_length', 'integer', (c) => c.notNull())
      .addColumn('probed_at', t.ts, (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('error', t.text)
      .execute();
    await db.schema
      .createIndex('ix_scep_probes_recent')
      .on('scep_probes')
      .columns(['probed_at', 'id'])
      .execute();
  },
};
