import {
  AUDIT_GENESIS_HASH,
  type AuditEvent,
  type AuditHead,
  legacyAuditHash,
  type NewAuditEvent,
  SecretBox,
} from '@certwright/core';
import { describeAuditHeadLoss } from '@certwright/core/testing';
import { createSqlStorage, type SqlStorage } from '@certwright/storage-sql';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteStorage, createPostgresStorage } from '../src/index.js';
import { createMigratedPgliteStorage } from '../src/testing.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

/**
 * What someone with write access to the database, but not the encryption key, can do to the
 * audit trail — and that the keyed chain reports each of it at the right position.
 */

const secretBox = new SecretBox(SecretBox.generateKey());

const entry = (i: number): NewAuditEvent => ({
  actor: 'admin',
  actor_type: 'api_key',
  action: 'certificate_created',
  resource_type: 'certificate',
  resource_id: `mc-${i}`,
  category: 'cert_lifecycle',
  details: { i },
});

let shared: { storage: SqlStorage; empty: AuditHead } | undefined;

/** One embedded database for these tests; each starts from an empty, sealed trail. */
async function withTrail(
  events: number,
  body: (storage: SqlStorage, trail: AuditEvent[]) => Promise<void>,
): Promise<void> {
  if (!shared) {
    const storage = await createPgliteStorage({ memory: true }, { secretBox });
    await storage.migrate();
    shared = { storage, empty: await storage.audit.head() };
  }
  const { storage, empty } = shared;
  await storage.db.deleteFrom('audit_events').execute();
  await storage.db
    .updateTable('audit_head')
    .set({ last_seq: empty.seq, last_hash: empty.hash, keyed_from_seq: 1, head_mac: empty.mac })
    .where('id', '=', 1)
    .execute();
  const trail: AuditEvent[] = [];
  for (let i = 1; i <= events; i += 1) trail.push(await storage.audit.append(entry(i)));
  await body(storage, trail);
}

async function rows(storage: SqlStorage): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  for await (const e of storage.audit.stream()) out.push(e);
  return out;
}

/** Rewrites events from `from` on with unkeyed hashes, linked, and the head row to match. */
async function rehashUnkeyed(storage: SqlStorage, from: number): Promise<void> {
  const events = await rows(storage);
  let prev = from > 1 ? (events[from - 2] as AuditEvent).hash : AUDIT_GENESIS_HASH;
  for (const event of events.slice(from - 1)) {
    const { hash: _, ...rest } = event;
    const hash = await legacyAuditHash({ ...rest, prev_hash: prev });
    await storage.db
      .updateTable('audit_events')
      .set({ prev_hash: prev, hash })
      .where('seq', '=', event.seq)
      .execute();
    prev = hash;
  }
  await storage.db
    .updateTable('audit_head')
    .set({ last_seq: events.length, last_hash: prev })
    .where('id', '=', 1)
    .execute();
}

describe('audit chain under database tampering (PGlite)', { timeout: 120_000 }, () => {
  afterAll(async () => {
    await shared?.storage.close();
  });

  it('reports an edited event even when every later hash was recomputed unkeyed', async () => {
    await withTrail(6, async (storage) => {
      await storage.db
        .updateTable('audit_events')
        .set({ details: JSON.stringify({ i: 'forged' }) })
        .where('seq', '=', 3)
        .execute();
      await rehashUnkeyed(storage, 3);
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        checked: 2,
        brokenAt: 3,
        reason: 'hash mismatch',
      });
    });
  });

  it('reports the newest events deleted, and a head row rewound to hide it', async () => {
    await withTrail(6, async (storage, trail) => {
      await storage.db.deleteFrom('audit_events').where('seq', '>', 3).execute();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        checked: 3,
        brokenAt: 4,
        reason: 'event 4 is missing',
      });
      const third = trail[2] as AuditEvent;
      await storage.db
        .updateTable('audit_head')
        .set({ last_seq: 3, last_hash: third.hash })
        .where('id', '=', 1)
        .execute();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        brokenAt: 3,
        reason: 'the stored head does not verify',
      });
    });
  });

  it('reports a relinked event at its position', async () => {
    await withTrail(5, async (storage, trail) => {
      // Event 3 removed, the later ones renumbered and event 4 linked to event 2.
      await storage.db.deleteFrom('audit_events').where('seq', '=', 3).execute();
      await storage.db
        .updateTable('audit_events')
        .set({ prev_hash: (trail[1] as AuditEvent).hash })
        .where('seq', '=', 4)
        .execute();
      for (const seq of [4, 5]) {
        await storage.db
          .updateTable('audit_events')
          .set({ seq: seq - 1 })
          .where('seq', '=', seq)
          .execute();
      }
      await storage.db.updateTable('audit_head').set({ last_seq: 4 }).where('id', '=', 1).execute();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        checked: 2,
        brokenAt: 3,
        reason: 'hash mismatch',
      });
    });
  });

  it('reports a row inserted beyond the head', async () => {
    await withTrail(2, async (storage, trail) => {
      const last = trail[1] as AuditEvent;
      await storage.db
        .insertInto('audit_events')
        .values({ ...last, id: 'ae-forged', seq: 3, prev_hash: last.hash, details: '{}' })
        .execute();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        brokenAt: 3,
        reason: 'event after the stored head',
      });
    });
  });

  it('does not seal a rewritten head when the next event is appended after it', async () => {
    await withTrail(4, async (storage) => {
      // Every event rehashed unkeyed and the head's keyed position moved past them, so the
      // whole trail would pass for one written before the chain was keyed.
      await storage.db.updateTable('audit_events').set({ actor: 'mallory' }).where('seq', '=', 2).execute();
      await rehashUnkeyed(storage, 1);
      await storage.db.updateTable('audit_head').set({ keyed_from_seq: 5 }).where('id', '=', 1).execute();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        brokenAt: 4,
        reason: 'the stored head does not verify',
      });
      await storage.audit.append(entry(5));
      expect(await storage.audit.head()).toMatchObject({ seq: 5, mac: null });
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        checked: 5,
        brokenAt: 5,
        reason: 'the stored head does not verify',
      });
    });
  });

  it('does not verify a trail written under another encryption key', async () => {
    await withTrail(3, async (storage) => {
      expect(await storage.audit.verify()).toMatchObject({ ok: true, checked: 3 });
      const other = createSqlStorage({
        db: storage.db,
        flavor: 'postgres',
        engine: 'pglite',
        secretBox: new SecretBox(SecretBox.generateKey()),
      });
      // The chain key is stored sealed under the trail's own key, which the other one cannot open.
      expect(await other.audit.verify()).toMatchObject({
        ok: false,
        checked: 0,
        brokenAt: 1,
        reason: 'the chain key does not open with this encryption key',
      });
    });
  });
});

describe('upgrading an unkeyed audit trail (PGlite)', { timeout: 120_000 }, () => {
  it('keeps the unkeyed events, continues keyed from the next seq and seals the head once', async () => {
    const storage = await createPgliteStorage({ memory: true }, { secretBox });
    try {
      await storage.migrate();
      // The schema as it was before migration 6, holding a trail of three unkeyed events.
      await sql`alter table audit_head drop column keyed_from_seq, drop column head_mac`.execute(storage.db);
      await storage.db.deleteFrom('cw_schema_migrations').where('version', '=', 6).execute();
      let prev = AUDIT_GENESIS_HASH;
      for (let seq = 1; seq <= 3; seq += 1) {
        const base = {
          ...entry(seq),
          id: `ae-legacy-${seq}`,
          seq,
          occurred_at: new Date(Date.UTC(2025, 0, seq)),
          prev_hash: prev,
        };
        const hash = await legacyAuditHash(base);
        await storage.db
          .insertInto('audit_events')
          .values({ ...base, hash, details: JSON.stringify(base.details) })
          .execute();
        prev = hash;
      }
      await sql`update audit_head set last_seq = 3, last_hash = ${prev} where id = 1`.execute(storage.db);

      expect((await storage.migrate()).applied).toEqual([6]);
      const head = await storage.audit.head();
      expect(head).toMatchObject({ seq: 3, hash: prev, keyed_from_seq: 4 });
      expect(await storage.audit.verify()).toMatchObject({ ok: true, checked: 3 });
      const keyed = await storage.audit.append(entry(4));
      expect(keyed).toMatchObject({ seq: 4, prev_hash: prev });
      expect(await storage.audit.verify()).toMatchObject({ ok: true, checked: 4 });

      // Later starts never seal again: a head whose MAC was cleared stays refused.
      const sealed = await storage.audit.head();
      expect((await storage.migrate()).applied).toEqual([]);
      expect(await storage.audit.head()).toEqual(sealed);
      await storage.db.updateTable('audit_head').set({ head_mac: null }).where('id', '=', 1).execute();
      await storage.migrate();
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        reason: 'the stored head does not verify',
      });
      await storage.db.updateTable('audit_head').set({ head_mac: sealed.mac }).where('id', '=', 1).execute();

      // An unkeyed event rewritten with its unkeyed successors recomputed no longer links to
      // the first keyed event.
      await storage.db.updateTable('audit_events').set({ actor: 'mallory' }).where('seq', '=', 2).execute();
      const events = await rows(storage);
      let link = (events[0] as AuditEvent).hash;
      for (const event of events.slice(1, 3)) {
        const { hash: _, ...rest } = event;
        const hash = await legacyAuditHash({ ...rest, prev_hash: link });
        await storage.db
          .updateTable('audit_events')
          .set({ prev_hash: link, hash })
          .where('seq', '=', event.seq)
          .execute();
        link = hash;
      }
      expect(await storage.audit.verify()).toMatchObject({
        ok: false,
        checked: 3,
        brokenAt: 4,
        reason: 'prev_hash does not link',
      });
    } finally {
      await storage.close();
    }
  });
});

const pgSkip = await postgresSkipReason();

describeAuditHeadLoss('PGlite', async () => {
  const storage = await createMigratedPgliteStorage({ secretBox });
  return {
    storage,
    deleteHead: async () => {
      await storage.db.deleteFrom('audit_head').execute();
    },
    close: () => storage.close(),
  };
});

describeAuditHeadLoss(
  'PostgreSQL',
  async () => {
    const temp = await createTempDatabase();
    const storage = createPostgresStorage(temp.url, { secretBox, maxConnections: 4 });
    await storage.migrate();
    return {
      storage,
      deleteHead: async () => {
        await storage.db.deleteFrom('audit_head').execute();
      },
      close: async () => {
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip: pgSkip },
);
