import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * Keys the audit chain (docs/api/audit.md). Events already stored keep their unkeyed SHA-256
 * hashes; the chain goes on keyed from the next seq, recorded here, and the first keyed event
 * links to the last unkeyed one, which pins every event before it. `head_mac` authenticates
 * the head (seq, hash, keyed_from_seq); it is written under the key by the start that applies
 * this migration (the migration itself never sees the key) and by every append after it.
 */
export const auditChain: Migration = {
  version: 6,
  name: 'audit_chain',
  async up(db, t) {
    await db.schema
      .alterTable('audit_head')
      .addColumn('keyed_from_seq', t.bigint, (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema.alterTable('audit_head').addColumn('head_mac', 'char(64)').execute();
    await db
      .updateTable('audit_head')
      .set({ keyed_from_seq: sql`last_seq + 1` })
      .where('id', '=', 1)
      .execute();
  },
};
