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

/**
 * A webhook target of alert notifications. Header values often carry credentials, so they are
 * sealed at rest; the public record lists only the header names. `events` lists the
 * notification types it receives (empty: every type).
 */
export const webhookSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  url: z.string().min(1).max(4096),
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

export interface WebhookWithHeaders extends Webhook {
  headers: WebhookHeaders;
}
