import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';
import { notificationTypeSchema } from './notification.js';

export const WEBHOOK_SERVICES = [
  'generic',
  'slack',
  'discord',
  'telegram',
  'gotify',
  'ntfy',
  'teams',
  'pagerduty',
] as const;
export const webhookServiceSchema = z.enum(WEBHOOK_SERVICES);
export type WebhookService = z.infer<typeof webhookServiceSchema>;

export const webhookMethodSchema = z.enum(['GET', 'POST', 'PUT', 'PATCH']);
export type WebhookMethod = z.infer<typeof webhookMethodSchema>;

export const webhookHeadersSchema = z.record(z.string().min(1).max(256), z.string().max(8192));
export type WebhookHeaders = z.infer<typeof webhookHeadersSchema>;

/**
 * Per-kind settings (docs/notifications/webhooks.md): the chat a bot message goes to, the topic
 * a topic-push message is published on, a fixed push priority (1–10; the topic push kind caps it at 5) instead of one by severity.
 */
export const webhookOptionsSchema = z
  .object({
    chat_id: z.string().min(1).max(128).optional(),
    topic: z.string().min(1).max(128).optional(),
    priority: z.number().int().min(1).max(10).optional(),
  })
  .strict();
export type WebhookOptions = z.infer<typeof webhookOptionsSchema>;

/** What replaces the path and query of a webhook URL wherever it is shown. */
export const WEBHOOK_URL_MASK = '********';

/**
 * A webhook URL as it may be shown: its origin (scheme, host, port) and, when anything follows
 * it, `/********` in place of the path and query — where chat and push services carry the
 * token (`/services/T…/B…/X…`, `/bot<TOKEN>/…`, `?token=…`, a secret topic) and generic
 * receivers often do too. Pure: the same URL always shows the same way.
 */
export function maskWebhookUrl(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)(.*)$/is.exec(url);
  if (!match) return WEBHOOK_URL_MASK;
  const rest = match[2] ?? '';
  return rest === '' || rest === '/' ? url : `${match[1]}/${WEBHOOK_URL_MASK}`;
}

/**
 * A webhook target of alert notifications. Its URL and header values often carry credentials,
 * so they are sealed at rest; the public record holds the URL masked ({@link maskWebhookUrl})
 * and only the header names. `events` lists the notification types it receives (empty: every
 * type).
 */
export const webhookSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  /** The URL as it may be shown: origin plus `WEBHOOK_URL_MASK`. */
  url_masked: z.string().min(1).max(4096),
  method: webhookMethodSchema,
  service: webhookServiceSchema,
  enabled: z.boolean(),
  template: z.string().max(65536),
  header_names: z.array(z.string()),
  events: z.array(notificationTypeSchema),
  options: webhookOptionsSchema,
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type Webhook = z.infer<typeof webhookSchema>;

/** A webhook with its secrets opened: the URL and the header values. */
export interface WebhookWithHeaders extends Webhook {
  url: string;
  headers: WebhookHeaders;
}
