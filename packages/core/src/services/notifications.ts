import { z } from 'zod';
import type { ManagedCertificate } from '../domain/certificate.js';
import {
  NOTIFICATION_RETRY_BUDGET,
  type NotificationEvent,
  type NotificationStatus,
  type NotificationType,
  notificationStatusSchema,
  notificationTypeSchema,
} from '../domain/notification.js';
import { fail, invalidState, isCertwrightError, publicMessage } from '../errors.js';
import { type ChannelOutcome, NotificationChannelRegistry } from '../notify/channel.js';
import { enqueueDeliveryAfterCommit } from '../notify/immediate-delivery.js';
import { afterFailedAttempt } from '../notify/retry-schedule.js';
import { webhookChannelName } from '../notify/webhooks/channel.js';
import { logAttemptFailure } from '../ports/attempt-log.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import { type Actor, type ServiceDeps, SYSTEM_ACTOR } from './context.js';
import { commaList, definedFields, parseInput } from './input.js';
import { type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

const recordId = z.string().min(1).max(128);

export const notificationCreateSchema = z.object({
  type: notificationTypeSchema,
  channel: z.string().min(1).max(128),
  recipient: z.string().max(1024),
  subject: z.string().max(1024),
  message: z.string().max(100_000),
  certificate_id: recordId.nullable().optional(),
  created_at: z
    .union([
      z.iso.datetime({ offset: true }).transform((text) => new Date(text)),
      // Any Date in-process, an invalid one included: it reads as the zero time (→ now).
      z.custom<Date>((value) => value instanceof Date, 'must be a date'),
    ])
    .optional()
    .describe('RFC 3339; left out or the zero time → now'),
});
export type NotificationInput = z.input<typeof notificationCreateSchema>;

export const notificationListSchema = pageQuerySchema.extend({
  status: commaList(notificationStatusSchema).optional().describe('comma-separated; dead included'),
  type: notificationTypeSchema.optional(),
  channel: z.string().min(1).max(128).optional(),
  certificate_id: recordId.optional(),
});
export type NotificationListQuery = z.input<typeof notificationListSchema>;

/** What one delivery pass did. */
export interface SweepReport {
  sent: number;
  failed: number;
  dead: number;
  /** Events no configured channel delivers (its channel is gone, its webhook deleted or disabled). */
  undeliverable: number;
  /**
   * Events that could not be claimed or whose status could not be written (storage down); they
   * are attempted again once storage answers and any claim they hold expired.
   */
  errors: number;
}

/** Deliveries per pass; a larger backlog drains over the following passes. */
const SWEEP_BATCH = 200;
/** A channel that neither resolves nor rejects within this time counts as a failed attempt. */
const SEND_TIMEOUT_MS = 30_000;
/**
 * How long an attempt holds its event's claim: well past the send timeout plus the status
 * write, so a live attempt never loses it; it bounds how late an event whose sender died is
 * retried.
 */
export const NOTIFICATION_CLAIM_LEASE_MS = 5 * 60_000;

/**
 * Notification events and their delivery. Every event is stored before any
 * delivery is tried, and a status change is written only after the channel answered, so a
 * channel that throws, hangs or crashes the process never loses an event: at worst it is
 * delivered again (at-least-once). Each attempt first claims its event (a lease in storage),
 * so the sweeps of several instances and the queue's immediate delivery never send the same
 * attempt twice; only a sender that dies mid-send leads to a second send, once its lease expired.
 */
export class NotificationService {
  readonly channels: NotificationChannelRegistry;
  /** Channels whose absence this process has logged already. */
  readonly #missingChannelsLogged = new Set<string>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {
    this.channels = deps.notifications?.channels ?? new NotificationChannelRegistry();
  }

  /**
   * An operator's notification (`POST /api/v1/notifications`): stored pending, delivered like
   * any other, and audited as `notification_created` because it sends a message to a recipient
   * the caller chose. Certificate notifications come through {@link raiseForOwner}.
   */
  async create(actor: Actor, input: NotificationInput): Promise<NotificationEvent> {
    const data = parseInput(notificationCreateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      const event = await this.#store(tx, data);
      await this.audit.record(
        actor,
        {
          action: 'notification_created',
          category: 'cert_lifecycle',
          resource_type: 'notification',
          resource_id: event.id,
          details: { type: event.type, channel: event.channel, certificate_id: event.certificate_id },
        },
        tx,
      );
      return event;
    });
  }

  /**
   * Stores a pending event inside `tx`; with a queue, its delivery is enqueued once that
   * transaction commits.
   */
  async #store(tx: Storage, input: z.output<typeof notificationCreateSchema>): Promise<NotificationEvent> {
    const zero = !input.created_at || !(input.created_at.getTime() > 0);
    // An event no channel of this server can take is stored as what it is, not queued: a
    // server without SMTP settings has no `email` channel, and its certificate notifications
    // are listed (and counted) as undeliverable instead of attempted, warned about and "sent".
    const deliverable = this.channels.get(input.channel) !== undefined;
    const event = await tx.notifications.create({
      type: input.type,
      channel: input.channel,
      recipient: input.recipient,
      subject: input.subject,
      message: input.message,
      certificate_id: input.certificate_id ?? null,
      status: deliverable ? 'pending' : 'undeliverable',
      ...(deliverable ? {} : { last_error: noChannel(input.channel) }),
      created_at: zero ? this.deps.clock.now() : (input.created_at as Date),
    });
    const queue = this.deps.notifications?.queue;
    if (queue && deliverable) enqueueDeliveryAfterCommit(tx, queue, event, this.deps.logger);
    return event;
  }

  /**
   * The one way to raise a notification about certificates: an `email` to their owner's
   * address, stored inside `tx` so it exists exactly when the change it reports committed.
   * `certificate_id` names the certificate when the notification is about exactly one.
   * Every certificate notification (renewal, expiration, deployment, revocation) comes here.
   */
  async raiseForOwner(
    tx: Storage,
    about: { owner_id: string; certificate_id: string | null },
    type: NotificationType,
    subject: string,
    lines: readonly string[],
  ): Promise<NotificationEvent> {
    const owner = await tx.owners.get(about.owner_id);
    const email = await this.#store(tx, {
      type,
      channel: 'email',
      // An owner without an address still gets the event stored (listable, requeueable);
      // the email channel reports the missing recipient as the delivery error.
      recipient: owner?.email ?? '',
      subject,
      message: lines.join('\n'),
      certificate_id: about.certificate_id,
    });
    await this.raiseForWebhooks(tx, about.certificate_id, type, subject, lines);
    return email;
  }

  /**
   * The webhook half of {@link raiseForOwner}, for alerts that have no owner to email (an
   * endpoint watched without a managed certificate). Every enabled webhook that takes this
   * type gets its own event in the same transaction, so each has its own retries, dead letter
   * and history (channel `webhook:<id>`). Returns the events stored.
   */
  async raiseForWebhooks(
    tx: Storage,
    certificateId: string | null,
    type: NotificationType,
    subject: string,
    lines: readonly string[],
  ): Promise<NotificationEvent[]> {
    const events: NotificationEvent[] = [];
    for (let page = 1; ; page++) {
      const hooks = await tx.webhooks.list({ enabled: true, page, perPage: 100 });
      for (const hook of hooks.items) {
        if (hook.events.length > 0 && !hook.events.includes(type)) continue;
        events.push(
          await this.#store(tx, {
            type,
            channel: webhookChannelName(hook.id),
            recipient: hook.name,
            subject,
            message: lines.join('\n'),
            certificate_id: certificateId,
          }),
        );
      }
      if (hooks.items.length < 100) break;
    }
    return events;
  }

  /** {@link raiseForOwner} for one certificate. */
  raiseForCertificate(
    tx: Storage,
    certificate: Pick<ManagedCertificate, 'id' | 'owner_id'>,
    type: NotificationType,
    subject: string,
    lines: readonly string[],
  ): Promise<NotificationEvent> {
    return this.raiseForOwner(
      tx,
      { owner_id: certificate.owner_id, certificate_id: certificate.id },
      type,
      subject,
      lines,
    );
  }

  /** Events, newest first. */
  async list(query: NotificationListQuery = {}): Promise<Paged<NotificationEvent>> {
    const { page, per_page, ...filter } = parseInput(notificationListSchema, query);
    const window = { page, per_page };
    const result = await this.deps.storage.notifications.list({
      ...storagePage(window),
      ...definedFields(filter),
    });
    return paged(result, window);
  }

  get(id: string): Promise<NotificationEvent> {
    return this.deps.storage.notifications.require(id);
  }

  /** Counts by status (the dashboard's dead count among them). */
  countByStatus(): Promise<Record<NotificationStatus, number>> {
    return this.deps.storage.notifications.countByStatus();
  }

  /**
   * Dead or undeliverable → pending with retry_count 0 and next_retry_at, last_error cleared
   * (an undeliverable event once its channel exists: SMTP configured, the webhook enabled).
   */
  requeue(actor: Actor, id: string): Promise<NotificationEvent> {
    return this.deps.storage.transaction(async (tx) => {
      const event = await tx.notifications.lockForUpdate(id); // before the check
      if (event.status !== 'dead' && event.status !== 'undeliverable') {
        throw invalidState(
          `notification '${id}' is ${event.status}; only dead or undeliverable notifications can be requeued`,
          {
            notification_status: event.status,
          },
        );
      }
      const requeued = await tx.notifications.update(id, {
        status: 'pending',
        retry_count: 0,
        next_retry_at: null,
        last_error: null,
      });
      await this.audit.record(
        actor,
        {
          action: 'notification_requeued',
          category: 'cert_lifecycle',
          resource_type: 'notification',
          resource_id: id,
          details: { previous_retry_count: event.retry_count },
        },
        tx,
      );
      return requeued;
    });
  }

  /** A delivered (sent) notification marked as read; reading twice changes nothing. */
  markRead(actor: Actor, id: string): Promise<NotificationEvent> {
    return this.deps.storage.transaction(async (tx) => {
      const event = await tx.notifications.lockForUpdate(id);
      if (event.status === 'read') return event;
      if (event.status !== 'sent') {
        throw invalidState(
          `notification '${id}' is ${event.status}; only sent notifications can be marked read`,
          {
            notification_status: event.status,
          },
        );
      }
      const read = await tx.notifications.update(id, { status: 'read' });
      await this.audit.record(
        actor,
        {
          action: 'notification_read',
          category: 'cert_lifecycle',
          resource_type: 'notification',
          resource_id: id,
        },
        tx,
      );
      return read;
    });
  }

  /**
   * One pass of the scheduler: first deliveries of pending events, then the retry sweep of
   * failed events whose next_retry_at is due at `now`.
   */
  async sweep(now: Date = this.deps.clock.now()): Promise<SweepReport> {
    const pending = await this.deliverPending(now);
    const retried = await this.retryDue(now);
    return {
      sent: pending.sent + retried.sent,
      failed: pending.failed + retried.failed,
      dead: pending.dead + retried.dead,
      undeliverable: pending.undeliverable + retried.undeliverable,
      errors: pending.errors + retried.errors,
    };
  }

  /** First delivery attempt of pending events (same outcome rules as a retry). */
  async deliverPending(now: Date = this.deps.clock.now()): Promise<SweepReport> {
    const report = emptyReport();
    const seen = new Set<string>();
    // Each attempted event leaves the unclaimed pending set (it is sent, failed, or keeps its
    // claim), so the first rows are always the next batch; `seen` stops the loop should one
    // come back anyway.
    while (seen.size < SWEEP_BATCH) {
      const batch = await this.deps.storage.notifications.pendingUnclaimed(now, 50);
      const fresh = batch.filter((e) => !seen.has(e.id));
      if (fresh.length === 0) break;
      for (const event of fresh) {
        seen.add(event.id);
        await this.#claimAndAttempt(event, now, report);
      }
    }
    return report;
  }

  /**
   * The immediate delivery of one event (the queue's `notification.deliver` job): a first
   * attempt while it is still pending and unclaimed; an event a sweep already took is left alone.
   */
  async deliver(id: string, now: Date = this.deps.clock.now()): Promise<SweepReport> {
    const report = emptyReport();
    const event = await this.deps.storage.notifications.get(id);
    if (event?.status === 'pending') await this.#claimAndAttempt(event, now, report);
    return report;
  }

  /** The retry sweep over failed events due at `now`. */
  async retryDue(now: Date = this.deps.clock.now()): Promise<SweepReport> {
    const report = emptyReport();
    for (const event of await this.deps.storage.notifications.dueForRetry(now, SWEEP_BATCH)) {
      await this.#claimAndAttempt(event, now, report);
    }
    return report;
  }

  /**
   * Attempts `event` only if this caller wins its claim; a lost claim means another sweep or
   * the queue job is attempting it (or already did), so nothing is sent and nothing counted.
   * The lease starts at the clock's now, not the pass's `now`: a long pass must not hand out
   * leases that already ran out.
   */
  async #claimAndAttempt(event: NotificationEvent, now: Date, report: SweepReport): Promise<void> {
    const claimedAt = this.deps.clock.now();
    let claimed: NotificationEvent | null;
    try {
      claimed = await this.deps.storage.notifications.claim(
        event,
        claimedAt,
        new Date(claimedAt.getTime() + NOTIFICATION_CLAIM_LEASE_MS),
      );
    } catch (storageError) {
      report.errors += 1;
      this.deps.logger.error(
        { err: storageError, notification_id: event.id },
        'could not claim a notification for delivery',
      );
      return;
    }
    if (claimed) await this.#attempt(claimed, now, report);
  }

  /**
   * One delivery attempt and its bookkeeping:
   * - no channel of that name, or the channel declines it (webhook deleted or disabled) →
   *   undeliverable (never sent, never retried: a removed notifier must not leave a stuck row);
   * - delivered → sent, retry_count unchanged;
   * - failed with retry_count below 4 → failed, count + 1, next_retry_at per the schedule;
   * - failed at 4 or more → dead, next_retry_at cleared, onDead called.
   */
  /** Records `event` as undeliverable (its claim released, nothing left to retry). */
  async #undeliverable(event: NotificationEvent, why: string, report: SweepReport): Promise<void> {
    await this.deps.storage.notifications.update(event.id, {
      status: 'undeliverable',
      next_retry_at: null,
      last_error: why,
    });
    report.undeliverable += 1;
  }

  async #attempt(event: NotificationEvent, now: Date, report: SweepReport): Promise<void> {
    const storage = this.deps.storage;
    const channel = this.channels.get(event.channel);
    try {
      if (!channel) {
        // Said once per channel and process: a backlog for a channel that is gone must not
        // become a warning per event at every start.
        if (!this.#missingChannelsLogged.has(event.channel)) {
          this.#missingChannelsLogged.add(event.channel);
          this.deps.logger.warn(
            { notification_id: event.id, channel: event.channel },
            'no notification channel of this name is configured; its events are undeliverable',
          );
        }
        await this.#undeliverable(event, noChannel(event.channel), report);
        return;
      }
      const failure = await sendWithTimeout(channel.send.bind(channel), event);
      if (failure !== null && 'note' in failure) {
        await this.#undeliverable(event, failure.note, report);
        return;
      }
      if (failure === null) {
        await storage.notifications.update(event.id, { status: 'sent', sent_at: now, next_retry_at: null });
        report.sent += 1;
        return;
      }
      // last_error is readable through the API: it carries the channel's safe sentence, the
      // cause (a transport's own message) is logged under the notification's id.
      const error = publicMessage(failure.error);
      const extra = isCertwrightError(failure.error) ? failure.error.extra : undefined;
      // A failure the channel calls permanent (a receiver's 4xx, a refused destination) would
      // fail the same way on every retry: it goes dead at once, visible and requeueable.
      const next =
        extra?.retry === false
          ? ({ status: 'dead', next_retry_at: null } as const)
          : afterFailedAttempt(event.retry_count, now);
      if (next.status === 'failed') {
        const wait = typeof extra?.retry_after_ms === 'number' ? extra.retry_after_ms : 0;
        const asked = new Date(now.getTime() + wait);
        if (asked > next.next_retry_at) next.next_retry_at = asked;
      }
      // One line per attempt with when the next one runs, no stack (at debug only): a receiver
      // that is down fails alike on every attempt. The cause goes under the notification's id.
      logAttemptFailure(this.deps.logger, {
        message: 'notification delivery failed',
        attempt: event.retry_count + 1,
        maxAttempts: NOTIFICATION_RETRY_BUDGET,
        nextRetryAt: next.next_retry_at,
        error: failure.error,
        fields: { notification_id: event.id, channel: event.channel },
      });
      if (next.status === 'failed') {
        await storage.notifications.update(event.id, { ...next, last_error: error });
        report.failed += 1;
        return;
      }
      const dead = await storage.transaction(async (tx) => {
        const updated = await tx.notifications.update(event.id, {
          status: 'dead',
          next_retry_at: null,
          last_error: error,
        });
        await this.audit.record(
          SYSTEM_ACTOR,
          {
            action: 'notification_dead',
            category: 'cert_lifecycle',
            resource_type: 'notification',
            resource_id: event.id,
            details: { channel: event.channel, retry_count: updated.retry_count, last_error: error },
          },
          tx,
        );
        return updated;
      });
      report.dead += 1;
      try {
        this.deps.notifications?.onDead?.(dead);
      } catch (hookError) {
        this.deps.logger.error({ err: hookError, notification_id: event.id }, 'onDead hook threw');
      }
    } catch (storageError) {
      // The status write failed; the event keeps its previous state and its claim, and is
      // attempted again once the claim expired.
      report.errors += 1;
      this.deps.logger.error(
        { err: storageError, notification_id: event.id },
        'could not record a delivery attempt',
      );
    }
  }
}

function emptyReport(): SweepReport {
  return { sent: 0, failed: 0, dead: 0, undeliverable: 0, errors: 0 };
}

/** Why an event of `channel` cannot be delivered by this server. */
function noChannel(channel: string): string {
  const hint = channel === 'email' ? ' (e-mail needs SVC_SMTP_HOST)' : '';
  return `no notification channel '${channel}' is configured${hint}; not delivered`;
}

/**
 * Runs a send and turns every way it can fail (throw, reject, hang) into the failure, or null
 * when it was delivered.
 */
async function sendWithTimeout(
  // biome-ignore lint/suspicious/noConfusingVoidType: existing channels resolve void; an outcome is optional
  send: (event: NotificationEvent) => Promise<void | ChannelOutcome>,
  event: NotificationEvent,
): Promise<{ error: unknown } | ChannelOutcome | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<{ error: unknown }>((resolve) => {
    timer = setTimeout(
      () => resolve({ error: fail('unavailable', `delivery timed out after ${SEND_TIMEOUT_MS / 1000}s`) }),
      SEND_TIMEOUT_MS,
    );
  });
  try {
    const attempt = Promise.resolve()
      .then(() => send(event))
      .then(
        (outcome) => (outcome && typeof outcome.note === 'string' ? { note: outcome.note } : null),
        (error: unknown) => ({ error }),
      );
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
