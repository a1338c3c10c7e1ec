import { z } from 'zod';
import type { Job } from '../domain/job.js';
import {
  type DeploymentTarget,
  maskedConfigField,
  maskTargetConfig,
  TARGET_TYPES,
  type TargetConfig,
  type TargetView,
  targetConfigSchema,
  targetTypeSchema,
} from '../domain/target.js';
import { CertwrightError, invalidState, notFound, validationError } from '../errors.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { booleanFlag, definedFields, parseInput } from './input.js';
import { VALIDATION_KINDS } from './job-kinds.js';
import { type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

const recordId = z.string().min(1).max(128);
const targetName = z.string().trim().min(1).max(255);

export const targetCreateSchema = z.object({
  agent_id: recordId,
  name: targetName,
  // string first, so that a missing type reads "is required" rather than "invalid option".
  type: z
    .string()
    .pipe(targetTypeSchema)
    .describe(`proper-case connector type: ${TARGET_TYPES.join(', ')}`),
  config: targetConfigSchema
    .optional()
    .describe('connector settings; sealed (AES-256-GCM) by the storage, shown with secret values masked'),
  enabled: z.boolean().optional(),
});

export const targetUpdateSchema = z.object({
  name: targetName.optional(),
  type: targetTypeSchema.optional(),
  config: targetConfigSchema.optional(),
  enabled: z.boolean().optional(),
});

export const targetListSchema = pageQuerySchema.extend({
  agent_id: recordId.optional(),
  type: targetTypeSchema.optional(),
  retired: booleanFlag.optional(),
});

export type TargetInput = z.input<typeof targetCreateSchema>;
export type TargetUpdate = z.input<typeof targetUpdateSchema>;
export type TargetListQuery = z.input<typeof targetListSchema>;

/**
 * A config that carries the mask where a value belongs came from a masked view: storing it would
 * replace a secret with eight asterisks. 400 naming the member.
 */
function refuseMask(config: TargetConfig): void {
  const field = maskedConfigField(config);
  if (field)
    throw validationError([{ field, message: 'is the mask of a stored secret: give the value itself' }]);
}

/** Deployment targets: where an agent installs certificates. */
export class TargetService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  /**
   * Creates a target for an existing, unretired agent; an unknown or retired agent is
   * `invalid_reference` naming `agent_id` (400).
   */
  async create(actor: Actor, input: TargetInput): Promise<TargetView> {
    const data = parseInput(targetCreateSchema, input);
    if (data.config) refuseMask(data.config);
    return this.deps.storage.transaction(async (tx) => {
      const agent = await tx.agents.get(data.agent_id);
      if (!agent || agent.retired_at !== null) {
        throw new CertwrightError(
          'invalid_reference',
          agent ? `agent '${data.agent_id}' is retired` : `agent '${data.agent_id}' does not exist`,
          {
            fields: [
              { field: 'agent_id', message: agent ? 'names a retired agent' : 'names no existing agent' },
            ],
          },
        );
      }
      const target = await tx.targets.create({
        agent_id: data.agent_id,
        name: data.name,
        type: data.type,
        ...(data.enabled === undefined ? {} : { enabled: data.enabled }),
        config: data.config ?? {},
      });
      await this.audit.record(
        actor,
        {
          action: 'target_created',
          category: 'config',
          resource_type: 'target',
          resource_id: target.id,
          // Config keys only: values may be credentials.
          details: {
            agent_id: target.agent_id,
            name: target.name,
            type: target.type,
            config_keys: Object.keys(data.config ?? {}).sort(),
          },
        },
        tx,
      );
      return { ...target, config: maskTargetConfig(data.config ?? {}) };
    });
  }

  async list(query: TargetListQuery = {}): Promise<Paged<DeploymentTarget>> {
    const { page, per_page, ...filter } = parseInput(targetListSchema, query);
    const window = { page, per_page };
    return paged(
      await this.deps.storage.targets.list({ ...storagePage(window), ...definedFields(filter) }),
      window,
    );
  }

  get(id: string): Promise<DeploymentTarget> {
    return this.deps.storage.targets.require(id);
  }

  /** One target with its config, every secret value masked (paths and commands as given). */
  async view(id: string): Promise<TargetView> {
    const target = await this.deps.storage.targets.getWithConfig(id);
    if (!target) throw notFound('target', id);
    return { ...target, config: maskTargetConfig(target.config) };
  }

  /**
   * Changes name, type, enabled or config (a config given replaces the stored one whole, secrets
   * included: the masked view cannot be sent back as it is); a retired target is a `conflict`.
   */
  async update(actor: Actor, id: string, input: TargetUpdate): Promise<TargetView> {
    const patch = parseInput(targetUpdateSchema, input);
    if (patch.config) refuseMask(patch.config);
    const updated = await this.#update(actor, id, patch);
    return this.view(updated.id);
  }

  #update(actor: Actor, id: string, patch: z.output<typeof targetUpdateSchema>): Promise<DeploymentTarget> {
    return this.deps.storage.transaction(async (tx) => {
      const current = await tx.targets.require(id);
      if (current.retired_at !== null) throw invalidState(`target '${id}' is retired`);
      const changes = definedFields(patch);
      const updated = await tx.targets.update(id, changes);
      await this.audit.record(
        actor,
        {
          action: 'target_updated',
          category: 'config',
          resource_type: 'target',
          resource_id: id,
          details: { fields: Object.keys(changes).sort() },
        },
        tx,
      );
      return updated;
    });
  }

  /** Deletes a target; `conflict` while certificates or jobs still reference it. */
  delete(actor: Actor, id: string): Promise<void> {
    return this.deps.storage.transaction(async (tx) => {
      const target = await tx.targets.require(id);
      await tx.targets.delete(id);
      await this.audit.record(
        actor,
        {
          action: 'target_deleted',
          category: 'config',
          resource_type: 'target',
          resource_id: id,
          details: { agent_id: target.agent_id, name: target.name, type: target.type },
        },
        tx,
      );
    });
  }

  /**
   * Asks the target's agent to test its connection: a Validation job (payload kind
   * `connection_test`) the agent picks up with its next work poll and reports on through the
   * job status; the job's `status`, `result` and `last_error` are the test's outcome.
   */
  requestConnectionTest(actor: Actor, id: string): Promise<Job> {
    return this.deps.storage.transaction(async (tx) => {
      const target = await tx.targets.require(id);
      if (target.retired_at !== null) throw invalidState(`target '${id}' is retired`);
      const agent = await tx.agents.require(target.agent_id);
      if (agent.retired_at !== null) throw invalidState(`the agent of target '${id}' is retired`);
      const job = await tx.jobs.create({
        type: 'Validation',
        target_id: target.id,
        agent_id: target.agent_id,
        payload: { kind: VALIDATION_KINDS.connectionTest, target_type: target.type },
        max_attempts: 1,
      });
      await this.audit.record(
        actor,
        {
          action: 'target_test_requested',
          category: 'config',
          resource_type: 'target',
          resource_id: id,
          details: { job_id: job.id },
        },
        tx,
      );
      return job;
    });
  }
}
