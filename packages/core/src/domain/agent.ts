import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const AGENT_STATUSES = ['Online', 'Offline', 'Degraded'] as const;
export const agentStatusSchema = z.enum(AGENT_STATUSES);
export type AgentStatus = z.infer<typeof agentStatusSchema>;

/** Reserved ids used by discovery sources; never retired, seeded at start-up. */
export const SENTINEL_AGENT_IDS = [
  'server-scanner',
  'cloud-aws-sm',
  'cloud-azure-kv',
  'cloud-gcp-sm',
] as const;
export type SentinelAgentId = (typeof SENTINEL_AGENT_IDS)[number];
export const isSentinelAgentId = (id: string): id is SentinelAgentId =>
  (SENTINEL_AGENT_IDS as readonly string[]).includes(id);

/** The public agent record. The API key hash is deliberately not part of it. */
export const agentSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  hostname: z.string().max(255),
  status: agentStatusSchema,
  last_heartbeat_at: timestampSchema.nullable(),
  registered_at: timestampSchema,
  os: z.string().max(64),
  architecture: z.string().max(64),
  ip_address: z.string().max(64),
  version: z.string().max(64),
  retired_at: timestampSchema.nullable(),
  retired_reason: z.string().max(2000).nullable(),
});
export type Agent = z.infer<typeof agentSchema>;

/** What blocks a retirement without force. */
export interface AgentDependencyCounts {
  active_targets: number;
  active_certificates: number;
  pending_jobs: number;
}
