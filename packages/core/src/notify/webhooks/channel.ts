import type { NotificationEvent } from '../../domain/notification.js';
import { fail } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Storage } from '../../ports/storage.js';
import type { ChannelOutcome, NotificationChannel } from '../channel.js';
import { alertFromEvent } from './alert.js';
import type { WebhookSender } from './sender.js';

/** Events for webhook `id` carry the channel name `webhook:<id>`. */
export const WEBHOOK_CHANNEL_PREFIX = 'webhook:';
export const webhookChannelName = (id: string): string => `${WEBHOOK_CHANNEL_PREFIX}${id}`;

export interface WebhookChannelDeps {
  storage: Storage;
  clock: Clock;
  sender: WebhookSender;
  /** `.Instance` of every alert: this instance's URL. */
  instance?: string;
  /** `.Node` of every alert. */
  node?: string;
}

/**
 * The notification channel of every webhook (registered under the prefix `webhook:`). The
 * webhook is read at delivery time: a deleted one resolves the event, a disabled one skips it,
 * an edited one delivers with its new settings, and its URL is checked by the guard again.
 * A failed delivery throws: retryable failures follow the notification retry schedule
 * (`extra.retry_after_ms` when the target asked to wait), others (`extra.retry: false`, a 4xx
 * or a refused destination) go dead at once.
 */
export class WebhookChannel implements NotificationChannel {
  readonly name = WEBHOOK_CHANNEL_PREFIX;

  constructor(private readonly deps: WebhookChannelDeps) {}

  // biome-ignore lint/suspicious/noConfusingVoidType: existing channels resolve void; an outcome is optional
  async send(event: NotificationEvent): Promise<void | ChannelOutcome> {
    const id = event.channel.slice(WEBHOOK_CHANNEL_PREFIX.length);
    const hook = await this.deps.storage.webhooks.getWithHeaders(id);
    if (!hook) return { note: `webhook '${id}' does not exist (deleted); not delivered` };
    if (!hook.enabled) return { note: `webhook '${hook.name}' is disabled; not delivered` };
    const certificate = event.certificate_id
      ? await this.deps.storage.certificates.get(event.certificate_id)
      : null;
    const alert = alertFromEvent(event, {
      certificate,
      now: this.deps.clock.now(),
      ...(this.deps.instance ? { instance: this.deps.instance } : {}),
      ...(this.deps.node ? { node: this.deps.node } : {}),
    });
    // The event id is the idempotency key: every retry of one event carries the same key.
    const result = await this.deps.sender.send(hook, alert, event.id);
    if (result.delivered) return;
    throw fail('unavailable', `${result.error}: ${result.meaning}`, {
      extra: {
        retry: result.retryable,
        status_code: result.status_code,
        ...(result.retry_after_ms !== undefined ? { retry_after_ms: result.retry_after_ms } : {}),
      },
    });
  }
}
