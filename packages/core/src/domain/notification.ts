import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const NOTIFICATION_TYPES = [
  'ExpirationWarning',
  'RenewalSuccess',
  'RenewalFailure',
  'DeploymentSuccess',
  'DeploymentFailure',
  'PolicyViolation',
  'Revocation',
  'EndpointHealth',
] as const;
export const notificationTypeSchema = z.enum(NOTIFICATION_TYPES);
export type NotificationType = z.infer<typeof notificationTypeSchema>;

/**
 * `undeliverable`: no configured channel can deliver the event (no channel of its name on this
 * server — no SMTP settings for `email` —, its webhook deleted or disabled). Never counted as
 * sent; an operator can requeue it once a channel exists.
 */
export const NOTIFICATION_STATUSES = ['pending', 'sent', 'failed', 'dead', 'read', 'undeliverable'] as const;
export const notificationStatusSchema = z.enum(NOTIFICATION_STATUSES);
export type NotificationStatus = z.infer<typeof notificationStatusSchema>;

/** Five attempts in all; the retry at count 4 or more goes dead. */
export const NOTIFICATION_RETRY_BUDGET = 5;

export const notificationEventSchema = z.object({
  id: idSchema,
  type: notificationTypeSchema,
  /** Channel name (`email`, `webhook:<id>` …); one no configured channel delivers is `undeliverable`. */
  channel: z.string().min(1).max(128),
  recipient: z.string().max(1024),
  subject: z.string().max(1024),
  message: z.string(),
  certificate_id: idSchema.nullable(),
  status: notificationStatusSchema,
  retry_count: z.number().int().min(0),
  next_retry_at: timestampSchema.nullable(),
  last_error: z.string().nullable(),
  sent_at: timestampSchema.nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type NotificationEvent = z.infer<typeof notificationEventSchema>;
