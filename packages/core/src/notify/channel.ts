import type { NotificationEvent } from '../domain/notification.js';
import { fail } from '../errors.js';

/** A send that declined on purpose (target deleted or disabled): the event is `undeliverable`, the note its `last_error`. */
export interface ChannelOutcome {
  note: string;
}

/**
 * One way of delivering notification events (email, webhook, chat …). `send` resolves when the
 * event was handed over (or deliberately not, with a note) and throws (any error) when it was
 * not; the pipeline turns a throw into a failed attempt, so a channel never needs to catch its
 * own errors. A `CertwrightError` whose `extra.retry` is false is not retried (the event goes
 * dead at once); `extra.retry_after_ms` delays the next attempt at least that long.
 */
export interface NotificationChannel {
  /**
   * Matches `NotificationEvent.channel` (e.g. `email`). A name ending in `:` (`webhook:`) is a
   * family: it receives every event whose channel starts with it and has no channel of its own.
   */
  readonly name: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: existing channels resolve void; an outcome is optional
  send(event: NotificationEvent): Promise<void | ChannelOutcome>;
}

/**
 * The channels known to this process, by name. Built by the embedder (or the server) and handed
 * to the services; there is no global registry, so tests and embedders choose their channels.
 * Channels may be added and removed at run time (a webhook deleted by an operator): an event
 * whose channel is gone is `undeliverable` instead of retrying forever.
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
    const exact = this.#channels.get(name);
    if (exact) return exact;
    const colon = name.indexOf(':');
    return colon > 0 ? this.#channels.get(name.slice(0, colon + 1)) : undefined;
  }

  names(): string[] {
    return [...this.#channels.keys()].sort();
  }
}
