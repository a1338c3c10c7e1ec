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
