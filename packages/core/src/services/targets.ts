import type { PageRequest, PageResult } from '../domain/common.js';
import type { Job } from '../domain/job.js';
import type { DeploymentTarget, TargetConfig, TargetType } from '../domain/target.js';
import { CertwrightError, invalidState } from '../errors.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { VALIDATION_KINDS } from './jobs.js';

export interface TargetInput {
  agent_id: string;
  name: string;
  type: TargetType;
  /** Connector settings; sealed (AES-256-GCM) by the storage and never returned by reads. */
  config?: TargetConfig | undefined;
  enabled?: boolean | undefined;
}

export interface TargetUpdate {
  name?: string | undefined;
  type?: TargetType | undefined;
  config?: TargetConfig | undefined;
  enabled?: boolean | undefined;
}

export interface TargetListQuery extends PageRequest {
  agent_id?: string | undefined;
  type?: TargetType | undefined;
  retired?: boolean | undefined;
}

/** Deployment targets: where an agent installs certificates. */
export class TargetService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  /**
   * Creates a target for an existing, unretired agent; an unknown or retired agent is
   * `invalid_reference` naming `agent_id` (spec §7: 400).
   */
  create(actor: Actor, input: TargetInput): Promise<DeploymentTarget> {
    return this.deps.storage.transaction(async (tx) => {
      const agent = await tx.agents.get(input.agent_id);
      if (!agent || agent.retired_at !== null) {
        throw new CertwrightError(
          'invalid_reference',
          agent ? `agent '${input.agent_id}' is retired` : `agent '${input.agent_id}' does not exist`,
          {
            fields: [
              { field: 'agent_id', message: agent ? 'names a retired agent' : 'names no existing agent' },
            ],
          },
        );
      }
      const target = await tx.targets.create({
        agent_id: input.agent_id,
        name: input.name,
        type: input.type,
        ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
        config: input.config ?? {},
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
            config_keys: Object.keys(input.config ?? {}).sort(),
          },
        },
        tx,
      );
      return target;
    });
  }

  list(query: TargetListQuery = {}): Promise<PageResult<DeploymentTarget>> {
    const { agent_id, type, retired, ...page } = query;
    return this.deps.storage.targets.list({
      ...page,
      ...(agent_id === undefined ? {} : { agent_id }),
      ...(type === undefined ? {} : { type }),
      ...(retired === undefined ? {} : { retired }),
    });
  }

  get(id: string): Promise<DeploymentTarget> {
    return this.deps.storage.targets.require(id);
  }

  /** Changes name, type, enabled or config; a retired target is a `conflict`. */
  update(actor: Actor, id: string, patch: TargetUpdate): Promise<DeploymentTarget> {
    return this.deps.storage.transaction(async (tx) => {
      const current = await tx.targets.require(id);
      if (current.retired_at !== null) throw invalidState(`target '${id}' is retired`);
      const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
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
