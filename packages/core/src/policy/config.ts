import { z } from 'zod';
import type { PolicyRuleType } from '../domain/policy.js';

/**
 * The config of each rule type: one key per type. Every schema is strict: a key the
 * type does not know is a mistake (a typo of the real key would otherwise silently turn into
 * "missing configuration").
 */
export const RULE_CONFIG_SCHEMAS = {
  AllowedIssuers: z.strictObject({
    allowed_issuer_ids: z.array(z.string().min(1).max(128)).max(1000).optional(),
  }),
  AllowedDomains: z.strictObject({
    allowed_domains: z
      .array(
        z
          .string()
          .min(1)
          .max(253)
          .regex(
            /^(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/,
            'must be a DNS name, optionally starting with "*."',
          ),
      )
      .max(1000)
      .optional(),
  }),
  RequiredMetadata: z.strictObject({
    required_keys: z.array(z.string().min(1).max(128)).max(100).optional(),
  }),
  AllowedEnvironments: z.strictObject({ allowed: z.array(z.string().min(1).max(64)).max(100).optional() }),
  RenewalLeadTime: z.strictObject({ lead_time_days: z.number().int().min(0).max(3650).optional() }),
  CertificateLifetime: z.strictObject({ max_days: z.number().int().min(1).max(36500).optional() }),
} as const satisfies Record<PolicyRuleType, z.ZodType>;

/** The single config key of each type. */
export const RULE_CONFIG_KEY: Readonly<Record<PolicyRuleType, string>> = {
  AllowedIssuers: 'allowed_issuer_ids',
  AllowedDomains: 'allowed_domains',
  RequiredMetadata: 'required_keys',
  AllowedEnvironments: 'allowed',
  RenewalLeadTime: 'lead_time_days',
  CertificateLifetime: 'max_days',
};

export type RuleConfigOf<T extends PolicyRuleType> = z.output<(typeof RULE_CONFIG_SCHEMAS)[T]>;

/**
 * How a stored config reads for a type:
 * - `missing`: null, empty text, `{}` or the type's key absent/null;
 * - `malformed`: text that is not JSON, a non-object, or values of the wrong shape (rule 3);
 * - `ok` with the parsed value otherwise.
 */
export type ConfigReading<T> =
  | { kind: 'missing' }
  | { kind: 'malformed'; reason: string }
  | { kind: 'ok'; value: T };

export function readRuleConfig(type: PolicyRuleType, config: unknown): ConfigReading<unknown> {
  let value = config;
  if (value === null || value === undefined) return { kind: 'missing' };
  if (typeof value === 'string') {
    // Storage hands back config text that is not valid JSON as the raw string.
    if (value.trim() === '') return { kind: 'missing' };
    try {
      value = JSON.parse(value);
    } catch {
      return { kind: 'malformed', reason: 'config is not valid JSON' };
    }
    if (value === null) return { kind: 'missing' };
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { kind: 'malformed', reason: 'config is not a JSON object' };
  }
  const key = RULE_CONFIG_KEY[type];
  const record = value as Record<string, unknown>;
  if (record[key] === undefined || record[key] === null) {
    // Extra keys next to a missing one are still "not configured" for this type.
    return { kind: 'missing' };
  }
  const parsed = RULE_CONFIG_SCHEMAS[type].safeParse({ [key]: record[key] });
  if (!parsed.success) {
    return { kind: 'malformed', reason: `${key}: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  }
  return { kind: 'ok', value: parsed.data };
}
