import { AUDIT_GENESIS_HASH, legacyAuditHash, SecretBox } from '@certwright/core';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createMysqlStorage } from '../src/index.js';
import { createTempDatabase, mysqlSkipReason } from './helpers.js';

const skip = await mysqlSkipReason();
if (skip) console.warn(`skipping the MariaDB audit upgrade test: ${skip}`);

describe.skipIf(skip !== undefined)('upgrading an unkeyed audit trail on MySQL/MariaDB', () => {
  it('keeps the unkeyed events, continues keyed from the next seq and catches a rewrite of them', async () => {
    const temp = await createTempDatabase();
    const storage = createMysqlStorage(temp.url, { secretBox: new SecretBox(SecretBox.generateKey()) });
    try {
      await storage.migrate();
      // The schema as it was before migration 6, holding a trail of three unkeyed events.
      await sql`alter table audit_head drop column keyed_from_seq, drop column head_mac`.execute(storage.db);
      await storage.db.deleteFrom('cw_schema_migrations').where('version', '=', 6).execute();
      const legacy = [];
      let prev = AUDIT_GENESIS_HASH;
      for (let seq = 1; seq <= 3; seq += 1) {
        const base = {
          id: `ae-legacy-${seq}`,
          seq,
          actor: 'admin',
          actor_type: 'api_key' as const,
          action: 'login',
          resource_type: 'session',
          resource_id: `s-${seq}`,
          category: 'auth' as const,
          details: { seq },
          occurred_at: new Date(Date.UTC(2025, 0, seq)),
          prev_hash: prev,
        };
        const hash = await legacyAuditHash(base);
        await storage.db
          .insertInto('audit_events')
          .values({ ...base, hash, details: JSON.stringify(base.details) })
          .execute();
        legacy.push({ ...base, hash });
        prev = hash;
      }
      await sql`update audit_head set last_seq = 3, last_hash = ${prev} where id = 1`.execute(storage.db);

      expect((await storage.migrate()).applied).toEqual([6]);
      expect(await storage.audit.head()).toMatchObject({ seq: 3, hash: prev, keyed_from_seq: 4 });
      const keyed = await storage.audit.append({
        actor: 'admin',
        actor_type: 'api_key',
        action: 'login',
        resource_type: 'session',
        resource_id: 'after',
        category: 'auth',
        details: {},
      });
      expect(keyed).toMatchObject({ seq: 4, prev_hash: prev });
      expect(await storage.audit.verify()).toMatchObject({ ok: true, checked: 4 });

      // The last unkeyed event rewritten and rehashed: the first keyed event no longer links.
      const forged = { ...legacy[2]!, actor: 'mallory' };
      const { hash: _, ...rest } = forged;
      await storage.db
        .updateTable('audit_events')
        .set({ actor: 'mallory', hash: await legacyAuditHash(rest) })
        .where('seq', '=', 3)
        .execute();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        checked: 3,
        brokenAt: 4,
        reason: 'prev_hash does not link',
      });
    } finally {
      await storage.close();
      await temp.drop();
    }
  }, 120_000);
});
