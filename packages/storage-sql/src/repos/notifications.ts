import {
  NOTIFICATION_STATUSES,
  type NotificationEvent,
  type NotificationRepository,
  type NotificationStatus,
  type NotificationType,
  newId,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { type Ctx, count, defined, toNum } from '../context.js';
import type { NotificationsTable } from '../schema.js';
import { countByStatus, listPage, lockFound, requireFound, updateById } from './crud.js';

function toNotification(r: Selectable<NotificationsTable>): NotificationEvent {
  return {
    id: r.id,
    type: r.type as NotificationType,
    channel: r.channel,
    recipient: r.recipient,
    subject: r.subject,
    message: r.message,
    certificate_id: r.certificate_id,
    status: r.status as NotificationStatus,
    retry_count: toNum(r.retry_count),
    next_retry_at: r.next_retry_at,
    last_error: r.last_error,
    sent_at: r.sent_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function notificationRepository(ctx: Ctx): NotificationRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('notification_events').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toNotification(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('notification', get);
  return {
    get,
    require,
    lockForUpdate: lockFound(ctx, 'notification', (id) => read(id, true)),
    async create(input) {
      const now = ctx.clock.now();
      // A zero created_at (the epoch, or an invalid date) means "now".
      const created = input.created_at && input.created_at.getTime() > 0 ? input.created_at : now;
      const event: NotificationEvent = {
        id: input.id ?? newId('notification'),
        type: input.type,
        channel: input.channel,
        recipient: input.recipient,
        subject: input.subject,
        message: input.message,
        certificate_id: input.certificate_id ?? null,
        status: input.status ?? 'pending',
        retry_count: input.retry_count ?? 0,
        next_retry_at: input.next_retry_at ?? null,
        last_error: input.last_error ?? null,
        sent_at: input.sent_at ?? null,
        created_at: created,
        updated_at: now,
      };
      await ctx.db.insertInto('notification_events').values(event).execute();
      return event;
    },
    async update(id, patch) {
      await require(id);
      // A status write records the end of the attempt that held the claim, so it releases it.
      const release = patch.status !== undefined ? { claimed_until: null } : {};
      await updateById(ctx, 'notification_events', id, { ...defined(patch), ...release });
      return require(id);
    },
    async claim(seen, now, until) {
      // One conditional UPDATE: the row changes only while it still has the status and
      // retry_count the caller read and no unexpired claim, so of any number of concurrent
      // callers exactly one sees a changed row. `until` is after `now`, so the value always
      // changes and MySQL's changed-rows count agrees with PostgreSQL's matched-rows count.
      const res = await ctx.db
        .updateTable('notification_events')
        .set({ claimed_until: until })
        .where('id', '=', seen.id)
        .where('status', '=', seen.status)
        .where('retry_count', '=', seen.retry_count)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1 ? get(seen.id) : null;
    },
    async pendingUnclaimed(now, limit) {
      const rows = await ctx.db
        .selectFrom('notification_events')
        .selectAll()
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toNotification);
    },
    async list(query = {}) {
      let base = ctx.db.selectFrom('notification_events');
      if (query.status !== undefined)
        base = base.where('status', 'in', Array.isArray(query.status) ? query.status : [query.status]);
      if (query.type !== undefined) base = base.where('type', '=', query.type);
      if (query.certificate_id !== undefined) base = base.where('certificate_id', '=', query.certificate_id);
      if (query.channel !== undefined) base = base.where('channel', '=', query.channel);
      return listPage(
        base,
        query,
        (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'),
        toNotification,
      );
    },
    async dueForRetry(now, limit) {
      const rows = await ctx.db
        .selectFrom('notification_events')
        .selectAll()
        .where('status', '=', 'failed')
        .where('next_retry_at', '<=', now)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .orderBy('next_retry_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toNotification);
    },
    countByStatus() {
      return countByStatus(ctx, 'notification_events', NOTIFICATION_STATUSES);
    },
  };
}
