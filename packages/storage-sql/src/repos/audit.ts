import {
  type ActorType,
  type AuditCategory,
  type AuditEvent,
  type AuditRepository,
  CertwrightError,
  computeAuditHash,
  newId,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { atomic, type Ctx, count, pageWindow, parseJson, toNum } from '../context.js';
import type { AuditEventsTable } from '../schema.js';

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

export function auditRepository(ctx: Ctx): AuditRepository {
  return {
    async append(input) {
      return atomic(ctx, async (c) => {
        // The head row lock serializes appends on every engine: a second appender waits here
        // and then reads the head the first one wrote, so the chain cannot fork.
        const head = await c.db
          .selectFrom('audit_head')
          .selectAll()
          .where('id', '=', 1)
          .forUpdate()
          .executeTakeFirst();
        if (!head)
          throw new CertwrightError('internal', 'audit chain head is missing; migrations did not run');
        const base = {
          id: newId('audit'),
          seq: toNum(head.last_seq) + 1,
          actor: input.actor,
          actor_type: input.actor_type,
          action: input.action,
          resource_type: input.resource_type,
          resource_id: input.resource_id,
          category: input.category,
          details: input.details,
          // Stored with millisecond precision, so hash exactly what will be read back.
          occurred_at: new Date(Math.floor((input.occurred_at ?? c.clock.now()).getTime())),
          prev_hash: head.last_hash,
        };
        // Details round-trip through JSON; hash the stored form so verification agrees.
        const details = JSON.parse(JSON.stringify(base.details ?? {})) as Record<string, unknown>;
        const event: AuditEvent = { ...base, details, hash: await computeAuditHash({ ...base, details }) };
        await c.db
          .insertInto('audit_events')
          .values({ ...event, details: JSON.stringify(details) })
          .execute();
        await c.db
          .updateTable('audit_head')
          .set({ last_seq: event.seq, last_hash: event.hash })
          .where('id', '=', 1)
          .execute();
        return event;
      });
    },

    async *stream(query = {}) {
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
      const r = await ctx.db
        .selectFrom('audit_events')
        .selectAll()
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      return r ? toEvent(r) : null;
    },

    async list(query = {}) {
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
}
