import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

/** Limits of a renewal policy's settings. */
export const RENEWAL_POLICY_LIMITS = {
  nameMax: 255,
  windowDays: { min: 1, max: 365, default: 30 },
  maxRetries: { min: 0, max: 10 },
  retryIntervalSeconds: { min: 60, max: 86400, default: 3600 },
  alertThresholdDays: { min: 0, max: 365, default: [30, 14, 7, 0] as readonly number[] },
} as const;

export const DEFAULT_RENEWAL_POLICY_ID = 'rp-default';

export const renewalPolicySchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(RENEWAL_POLICY_LIMITS.nameMax),
  renewal_window_days: z.number().int().min(1).max(365),
  /** No default: null means the caller never set it. */
  max_retries: z.number().int().min(0).max(10).nullable(),
  retry_interval_seconds: z.number().int().min(60).max(86400),
  alert_thresholds_days: z.array(z.number().int().min(0).max(365)),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type RenewalPolicy = z.infer<typeof renewalPolicySchema>;
