import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const POLICY_RULE_TYPES = [
  'AllowedIssuers',
  'AllowedDomains',
  'RequiredMetadata',
  'AllowedEnvironments',
  'RenewalLeadTime',
  'CertificateLifetime',
] as const;
export const policyRuleTypeSchema = z.enum(POLICY_RULE_TYPES);
export type PolicyRuleType = z.infer<typeof policyRuleTypeSchema>;

export const SEVERITIES = ['Warning', 'Error', 'Critical'] as const;
export const severitySchema = z.enum(SEVERITIES);
export type Severity = z.infer<typeof severitySchema>;

export const policyRuleSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  type: policyRuleTypeSchema,
  severity: severitySchema,
  /**
   * Parsed JSON config, or null when empty. Stored config text that is not valid JSON comes
   * back as the raw string, so the evaluator can skip and log it.
   */
  config: z.unknown(),
  enabled: z.boolean(),
  description: z.string().max(2000).nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type PolicyRule = z.infer<typeof policyRuleSchema>;

export const policyViolationSchema = z.object({
  id: idSchema,
  rule_id: idSchema,
  rule_type: policyRuleTypeSchema,
  certificate_id: idSchema,
  /** Copied from the rule that produced it. */
  severity: severitySchema,
  message: z.string().max(4000),
  detected_at: timestampSchema,
});
export type PolicyViolation = z.infer<typeof policyViolationSchema>;
