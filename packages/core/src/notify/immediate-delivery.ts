import type { NotificationEvent } from '../domain/notification.js';
import type { Logger } from '../ports/logger.js';
import type { Queue } from '../ports/queue.js';
import type { Storage } from '../ports/storage.js';

/**
 * Queue topic of the immediate delivery of one notification event. Payload: {@link DeliveryJob}.
 * The host runs a worker for it that calls `services.notifications.deliver(id)`.
 */
export const NOTIFICATION_DELIVERY_TOPIC = 'notification.deliver';

export interface DeliveryJob {
  /** The notification event's id. */
  id: string;
}

/**
 * Once the transaction that stored `event` commits, enqueues its delivery (dedupe key: the
 * event id, so one event is queued once at a time). Only a hint: an enqueue that fails, or a
 * process that dies before it, leaves the event pending and the retry sweep delivers it — the
 * delivery stays at-least-once either way.
 */
export function enqueueDeliveryAfterCommit(
  tx: Storage,
  queue: Pick<Queue, 'enqueue'>,
  event: Pick<NotificationEvent, 'id'>,
  logger: Logger,
): void {
  tx.afterCommit(() =>
    queue
      .enqueue<DeliveryJob>(NOTIFICATION_DELIVERY_TOPIC, { id: event.id }, { dedupeKey: event.id })
      .catch((error: unknown) =>
        logger.warn(
          { err: error, notification_id: event.id },
          'could not enqueue the immediate delivery of a notification; the retry sweep will deliver it',
        ),
      ),
  );
}
