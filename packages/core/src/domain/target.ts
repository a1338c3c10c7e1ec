import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const TARGET_TYPES = [
  'NGINX',
  'Apache',
  'HAProxy',
  'Traefik',
  'Caddy',
  'Envoy',
  'Postfix',
  'Dovecot',
  'SSH',
  'JavaKeystore',
  'WinCertStore',
  'KubernetesSecret',
  'IIS',
  'F5',
  'AWSSecretsManager',
  'AzureKeyVault',
  'GCPSecretManager',
] as const;
export const targetTypeSchema = z.enum(TARGET_TYPES);
export type TargetType = z.infer<typeof targetTypeSchema>;

export const targetConfigSchema = z.record(z.string(), z.unknown());
export type TargetConfig = z.infer<typeof targetConfigSchema>;

/** The public target record; connector config is sealed at rest and never serialized. */
export const deploymentTargetSchema = z.object({
  id: idSchema,
  agent_id: idSchema,
  name: z.string().min(1).max(255),
  type: targetTypeSchema,
  enabled: z.boolean(),
  retired_at: timestampSchema.nullable(),
  retired_reason: z.string().max(2000).nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type DeploymentTarget = z.infer<typeof deploymentTargetSchema>;

export interface DeploymentTargetWithConfig extends DeploymentTarget {
  config: TargetConfig;
}

/** What a masked secret value reads as, as for webhook header values. */
export const MASKED_CONFIG_VALUE = '********';

/**
 * Parts of a member name that mark its value as a credential (`password`, `keystore_passphrase`,
 * `api_token`, `client_secret`, `private_key` …), compared without case, `_`, `-` or spaces.
 * A name ending in `path`, `file` or `dir` names where a secret lives, not the secret.
 */
const SECRET_NAME_PARTS =
  /password|passphrase|passwd|secret|token|apikey|privatekey|credential|pin$|^key$|^pass$|^pwd$/;
const LOCATION_NAME = /(path|file|dir|directory)$/;
const PRIVATE_KEY_PEM = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

export function isSecretConfigName(name: string): boolean {
  const normalized = name.toLowerCase().replace(/[_\-\s]/g, '');
  return SECRET_NAME_PARTS.test(normalized) && !LOCATION_NAME.test(normalized);
}

/**
 * A target's connector config as it may be shown: paths, commands, hosts and the like as given,
 * every value under a secret-named member (at any depth) and every string holding a PEM private
 * key replaced by {@link MASKED_CONFIG_VALUE}. The stored config stays sealed as it was.
 */
export function maskTargetConfig(config: TargetConfig): TargetConfig {
  const mask = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return PRIVATE_KEY_PEM.test(value) ? MASKED_CONFIG_VALUE : value;
    if (value === null || typeof value !== 'object') return value;
    if (depth > 16) return MASKED_CONFIG_VALUE;
    if (Array.isArray(value)) return value.map((v) => mask(v, depth + 1));
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        isSecretConfigName(k) ? MASKED_CONFIG_VALUE : mask(v, depth + 1),
      ]),
    );
  };
  return mask(config, 0) as TargetConfig;
}

/** Where a config given back holds the mask instead of a value (`config.password`), or undefined. */
export function maskedConfigField(config: TargetConfig): string | undefined {
  const find = (value: unknown, path: string, depth: number): string | undefined => {
    if (value === MASKED_CONFIG_VALUE) return path;
    if (value === null || typeof value !== 'object' || depth > 16) return undefined;
    for (const [k, v] of Object.entries(value)) {
      const found = find(v, `${path}.${k}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  return find(config, 'config', 0);
}

/** A target as the API shows one: its config with secret values masked. */
export const targetViewSchema = deploymentTargetSchema.extend({
  config: targetConfigSchema.describe(
    `connector settings; every secret value (password, token, private key …) reads ${MASKED_CONFIG_VALUE}`,
  ),
});
export type TargetView = z.infer<typeof targetViewSchema>;
