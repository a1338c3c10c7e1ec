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

export const NOTIFICATION_STATUSES = ['pending', 'sent', 'failed', 'dead', 'read'] as const;
export const notificationStatusSchema = z.enum(NOTIFICATION_STATUSES);
export type NotificationStatus = z.infer<typeof notificationStatusSchema>;

/** Five attempts in all; the retry at count 4 or more goes dead. */
export const NOTIFICATION_RETRY_BUDGET = 5;

export const notificationEventSchema = z.object({
  id: idSchema,
  type: notificationTypeSchema,
  /** Channel name (`email`, `webhook:<id>` …); a channel that no longer exists resolves as sent. */
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
