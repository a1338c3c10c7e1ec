import {
  type ActorType,
  type AuditCategory,
  AuditChainKey,
  type AuditEvent,
  type AuditHead,
  type AuditRepository,
  auditHeadMessage,
  CertwrightError,
  computeAuditHash,
  computeAuditHeadMac,
  newId,
  type SecretBox,
  verifyAuditChain,
} from '@certwright/core';
import type { Insertable, Kysely, Selectable } from 'kysely';
import { atomic, type Ctx, count, pageWindow, parseJson, toNum } from '../context.js';
import type { AuditEventsTable, AuditHeadTable, Database } from '../schema.js';

function toHead(r: Selectable<AuditHeadTable>): AuditHead {
  return {
    seq: toNum(r.last_seq),
    hash: r.last_hash,
    keyed_from_seq: toNum(r.keyed_from_seq),
    mac: r.head_mac,
  };
}

async function readHead(db: Kysely<Database>, lock = false): Promise<AuditHead> {
  let q = db.selectFrom('audit_head').selectAll().where('id', '=', 1);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw new CertwrightError('internal', 'audit chain head is missing; migrations did not run');
  return toHead(row);
}

/**
 * Authenticates the head under the chain key. Runs only in the start that applied migration 6
 * (under the migration lock): sealing whatever head it finds at any later start would bless a
 * head someone rewrote in the database meanwhile.
 */
export async function sealAuditHead(db: Kysely<Database>, box: SecretBox): Promise<void> {
  const head = await readHead(db);
  await db
    .updateTable('audit_head')
    .set({ head_mac: await computeAuditHeadMac(head, AuditChainKey.of(box)) })
    .where('id', '=', 1)
    .execute();
}

/** The events up to `seq`: a verification ignores what was appended after it read the head. */
async function* through(events: AsyncIterable<AuditEvent>, seq: number): AsyncIterable<AuditEvent> {
  for await (const event of events) {
    if (event.seq > seq) return;
    yield event;
  }
}

function toEvent(r: Selectable<AuditEventsTable>): AuditEvent {
  return {
    id: r.id,
    seq: toNum(r.seq),
    actor: r.actor,
    actor_type: r.actor_type as ActorType,
    action: r.action,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    category: r.category as AuditCategory,
    details: parseJson(r.details, {}),
    occurred_at: r.occurred_at,
    prev_hash: r.prev_hash,
    hash: r.hash,
  };
}

/** Events per insert statement (12 parameters each, well within every engine's limit). */
const FLUSH_ROWS = 500;

/** Writes events and moves the head past the last of them. */
async function writeEvents(
  c: Ctx,
  rows: Insertable<AuditEventsTable>[],
  moved: { last_seq: number; last_hash: string; head_mac: string | null },
): Promise<void> {
  if (c.flavor === 'postgres') {
    // One statement: the events and the head they lead to, through a data-modifying WITH.
    await c.db
      .with('appended', (db) => db.insertInto('audit_events').values(rows))
      .updateTable('audit_head')
      .set(moved)
      .where('id', '=', 1)
      .execute();
  } else {
    await c.db.insertInto('audit_events').values(rows).execute();
    await c.db.updateTable('audit_head').set(moved).where('id', '=', 1).execute();
  }
}

export function auditRepository(ctx: Ctx): AuditRepository {
  /**
   * Inside a transaction, the head this transaction's last append wrote (and verified): the row
   * stays locked until the transaction ends, so it is still the head, and a second append in
   * the same transaction (a group commit of several issuances) neither reads nor verifies it again.
   */
  let written: AuditHead | undefined;
  /**
   * Inside `Storage.transaction`, appended events wait here and are written together, with the
   * head they lead to, just before the commit (or before anything in the transaction reads the
   * trail): one insert for many events of a group commit. The head row is locked by the first
   * append, so the chain cannot fork meanwhile, and the events commit with what they record.
   */
  let pending: Insertable<AuditEventsTable>[] = [];
  const deferred = ctx.beforeCommit !== undefined;
  async function flush(): Promise<void> {
    if (pending.length === 0 || !written) return;
    const rows = pending;
    pending = [];
    const moved = { last_seq: written.seq, last_hash: written.hash, head_mac: written.mac };
    for (let i = 0; i < rows.length; i += FLUSH_ROWS) {
      const chunk = rows.slice(i, i + FLUSH_ROWS);
      if (i + FLUSH_ROWS < rows.length) await ctx.db.insertInto('audit_events').values(chunk).execute();
      else await writeEvents(ctx, chunk, moved);
    }
  }
  if (deferred) ctx.beforeCommit!.push(flush);
  const repository: AuditRepository = {
    async append(input) {
      return atomic(ctx, async (c) => {
        const key = AuditChainKey.of(c.box);
        // The head row lock serializes appends on every engine: a second appender waits here
        // and then reads the head the first one wrote, so the chain cannot fork.
        const head = written ?? (await readHead(c.db, true));
        const base = {
          id: newId('audit'),
          seq: head.seq + 1,
          actor: input.actor,
          actor_type: input.actor_type,
          action: input.action,
          resource_type: input.resource_type,
          resource_id: input.resource_id,
          category: input.category,
          details: input.details,
          // Stored with millisecond precision, so hash exactly what will be read back.
          occurred_at: new Date(Math.floor((input.occurred_at ?? c.clock.now()).getTime())),
          prev_hash: head.hash,
        };
        // Details round-trip through JSON; hash the stored form so verification agrees.
        const details = JSON.parse(JSON.stringify(base.details ?? {})) as Record<string, unknown>;
        const event: AuditEvent = {
          ...base,
          details,
          hash: await computeAuditHash({ ...base, details }, key),
        };
        const next = { seq: event.seq, hash: event.hash, keyed_from_seq: head.keyed_from_seq };
        // A head that does not verify (rewritten in the database) is extended unsealed: sealing
        // it here would bless the rewrite, so verification keeps reporting it.
        const sealed =
          head.mac !== null && (head === written || (await key.verify(auditHeadMessage(head), head.mac)));
        const row = { ...event, details: JSON.stringify(details) };
        const head_mac = sealed ? await computeAuditHeadMac(next, key) : null;
        if (deferred) {
          pending.push(row);
          written = { ...next, mac: head_mac };
          if (pending.length >= FLUSH_ROWS) await flush();
          return event;
        }
        await writeEvents(c, [row], { last_seq: next.seq, last_hash: next.hash, head_mac });
        if (ctx.inTx) written = { ...next, mac: head_mac };
        return event;
      });
    },

    async *stream(query = {}) {
      await flush();
      const pageSize = Math.max(1, Math.floor(query.pageSize ?? 1000));
      let remaining = query.limit ?? Number.POSITIVE_INFINITY;
      let after = query.afterSeq ?? 0;
      while (remaining > 0) {
        let q = ctx.db.selectFrom('audit_events').selectAll().where('seq', '>', after);
        if (query.from) q = q.where('occurred_at', '>=', query.from);
        if (query.to) q = q.where('occurred_at', '<', query.to);
        if (query.category) q = q.where('category', '=', query.category);
        const rows = await q.orderBy('seq').limit(Math.min(pageSize, remaining)).execute();
        for (const r of rows) yield toEvent(r);
        remaining -= rows.length;
        if (rows.length < pageSize) return;
        after = toNum(rows[rows.length - 1]?.seq);
      }
    },

    async head() {
      await flush();
      return readHead(ctx.db);
    },

    async verify(anchor) {
      await flush();
      const head = await readHead(ctx.db);
      const result = await verifyAuditChain(
        through(repository.stream({ pageSize: 1000 }), head.seq),
        AuditChainKey.of(ctx.box),
        head,
        anchor,
      );
      if (!result.ok) return { ...result, head };
      // Rows beyond the head that no append wrote (an append commits its row and the head
      // together, so the newest seq read first cannot exceed the head read after it).
      const newest = await ctx.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.max('seq').as('n'))
        .executeTakeFirst();
      const now = await readHead(ctx.db);
      if (count(newest) > now.seq) {
        return {
          ok: false,
          checked: result.checked,
          brokenAt: now.seq + 1,
          reason: 'event after the stored head',
          head,
        };
      }
      return { ...result, head };
    },

    async list(query = {}) {
      await flush();
      const { limit, offset } = pageWindow(query);
      let base = ctx.db.selectFrom('audit_events');
      if (query.action !== undefined) base = base.where('action', '=', query.action);
      if (query.resource_id !== undefined) base = base.where('resource_id', '=', query.resource_id);
      if (query.category !== undefined) base = base.where('category', '=', query.category);
      const total = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
      const rows = await base.selectAll().orderBy('seq', 'desc').limit(limit).offset(offset).execute();
      return { items: rows.map(toEvent), total: count(total) };
    },
  };
  return repository;
}
