import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

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
 * Spec 001 §2.1. Header values often carry credentials, so they are sealed at rest; the
 * public record lists only the header names.
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
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type Webhook = z.infer<typeof webhookSchema>;

export interface WebhookWithHeaders extends Webhook {
  headers: WebhookHeaders;
}
