import type { NotificationEvent } from '../domain/notification.js';
import { fail } from '../errors.js';

/**
 * One way of delivering notification events (email, webhook, chat …). `send` resolves when the
 * event was handed over and throws (any error) when it was not; the pipeline turns a throw
 * into a failed attempt, so a channel never needs to catch its own errors.
 */
export interface NotificationChannel {
  /** Matches `NotificationEvent.channel` (e.g. `email`, `webhook:wh-…`). */
  readonly name: string;
  send(event: NotificationEvent): Promise<void>;
}

/**
 * The channels known to this process, by name. Built by the embedder (or the server) and handed
 * to the services; there is no global registry, so tests and embedders choose their channels.
 * Channels may be added and removed at run time (a webhook deleted by an operator): an event
 * whose channel is gone resolves as sent instead of retrying forever.
 */
export class NotificationChannelRegistry {
  readonly #channels = new Map<string, NotificationChannel>();

  constructor(channels: Iterable<NotificationChannel> = []) {
    for (const channel of channels) this.register(channel);
  }

  register(channel: NotificationChannel): void {
    if (this.#channels.has(channel.name)) {
      throw fail('duplicate', `notification channel '${channel.name}' is already registered`);
    }
    this.#channels.set(channel.name, channel);
  }

  /** `true` when a channel of that name was removed. */
  unregister(name: string): boolean {
    return this.#channels.delete(name);
  }

  get(name: string): NotificationChannel | undefined {
    return this.#channels.get(name);
  }

  names(): string[] {
    return [...this.#channels.keys()].sort();
  }
}
