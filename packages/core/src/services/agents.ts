import { z } from 'zod';
import {
  type Agent,
  type AgentDependencyCounts,
  type AgentStatus,
  isSentinelAgentId,
} from '../domain/agent.js';
import type { Job } from '../domain/job.js';
import type { TargetConfig, TargetType } from '../domain/target.js';
import { CertwrightError, fail, validationError } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import { AGENT_KEY_PREFIX, hashAgentKey, newAgentKey } from './agent-keys.js';
import type { AuditService } from './audit.js';
import { type Actor, type AgentSettings, DEFAULT_AGENT_SETTINGS, type ServiceDeps } from './context.js';
import { booleanFlag, parseInput } from './input.js';
import { AGENT_JOB_TYPES } from './job-kinds.js';
import type { JobService } from './jobs.js';
import { type ListPage, type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

const text = (max: number) => z.string().trim().max(max);

export const agentRegistrationSchema = z.object({
  name: text(255).min(1),
  hostname: text(255).min(1),
  os: text(64).optional(),
  architecture: text(64).optional(),
  ip_address: text(64).optional(),
  version: text(64).optional(),
});

/** Facts an agent reports with each heartbeat; absent fields keep their stored value. */
export const agentHeartbeatSchema = z.object({
  hostname: text(255).min(1).optional(),
  os: text(64).optional(),
  architecture: text(64).optional(),
  ip_address: text(64).optional(),
  version: text(64).optional(),
  failures: z
    .array(z.string().max(1000))
    .max(100)
    .optional()
    .describe('failing connectors or checks; non-empty → Degraded'),
});

export const agentRetireSchema = z.object({
  force: booleanFlag.optional(),
  reason: z.string().max(2000).optional(),
});

export const agentListSchema = pageQuerySchema;

export type AgentRegistration = z.input<typeof agentRegistrationSchema>;
export type HeartbeatReport = z.input<typeof agentHeartbeatSchema>;
export type RetireOptions = z.input<typeof agentRetireSchema>;

/** The one response that carries the key; it is not stored and cannot be shown again. */
export interface RegisteredAgent {
  agent: Agent;
  api_key: string;
}

export type RetireOutcome =
  | {
      /** true: this call retired the agent (200); false: it already was (204, nothing recorded). */
      changed: true;
      agent: Agent;
      dependencies: AgentDependencyCounts;
      cascaded: { targets_retired: number; jobs_cancelled: number } | null;
    }
  | { changed: false; agent: Agent };

/** A job as handed to its agent, with what the agent needs to carry it out. */
export interface AgentWorkItem {
  job: Job;
  /** The target's decrypted connector config; only the owning agent ever receives it. */
  target: { id: string; name: string; type: TargetType; config: TargetConfig } | null;
  /** For Deployment jobs: the version to install (the key only when the server holds it). */
  certificate: {
    version_id: string;
    serial_number: string;
    cert_pem: string;
    chain_pem: string;
    private_key_pem: string | null;
  } | null;
}

export interface AgentWork {
  /** Deployment and Validation jobs claimed for this agent by this poll (now Running). */
  jobs: AgentWorkItem[];
  /** Issuance/Renewal jobs waiting for this agent's CSR. */
  awaiting_csr: Job[];
}

/** Work handed out per poll; the rest waits for the next poll. */
const WORK_BATCH = 20;

/**
 * Agents: registration with a one-time key, heartbeats, work polls and retirement (§3.2).
 * The stored agent `status` is what the last heartbeat reported (Online or Degraded); the
 * status every read returns is computed from the heartbeat's age at read time, so an agent that
 * stops reporting turns Degraded and then Offline without any writer.
 */
export class AgentService {
  readonly settings: Readonly<AgentSettings>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly jobs: JobService,
  ) {
    this.settings = Object.freeze({ ...DEFAULT_AGENT_SETTINGS, ...deps.agentSettings });
    if (this.settings.offlineAfterMs <= this.settings.degradedAfterMs) {
      throw new CertwrightError(
        'config_invalid',
        'the agent offline threshold must exceed the degraded threshold',
      );
    }
  }

  /** Creates an agent and its key. Only the key's SHA-256 is stored. */
  async register(actor: Actor, input: AgentRegistration): Promise<RegisteredAgent> {
    const data = parseInput(agentRegistrationSchema, input);
    const apiKey = newAgentKey();
    const apiKeyHash = await hashAgentKey(apiKey);
    const agent = await this.deps.storage.transaction(async (tx) => {
      const created = await tx.agents.create({
        name: data.name,
        hostname: data.hostname,
        os: data.os ?? '',
        architecture: data.architecture ?? '',
        ip_address: data.ip_address ?? '',
        version: data.version ?? '',
        api_key_hash: apiKeyHash,
      });
      await this.audit.record(
        actor,
        {
          action: 'agent_registered',
          category: 'auth',
          resource_type: 'agent',
          resource_id: created.id,
          details: { name: created.name, hostname: created.hostname },
        },
        tx,
      );
      return created;
    });
    return { agent: this.#withStatus(agent), api_key: apiKey };
  }

  /** Active (unretired) agents, newest first. */
  async list(query: ListPage = {}): Promise<Paged<Agent>> {
    const window = parseInput(agentListSchema, query);
    const result = await this.deps.storage.agents.list({ ...storagePage(window), retired: false });
    return paged({ ...result, items: result.items.map((a) => this.#withStatus(a)) }, window);
  }

  /** Retired agents, most recently retired first; pages as every list does. */
  async listRetired(query: ListPage = {}): Promise<Paged<Agent>> {
    const window = parseInput(agentListSchema, query);
    const result = await this.deps.storage.agents.list({ ...storagePage(window), retired: true });
    return paged({ ...result, items: result.items.map((a) => this.#withStatus(a)) }, window);
  }

  async get(id: string): Promise<Agent> {
    return this.#withStatus(await this.deps.storage.agents.require(id));
  }

  /**
   * The agent a bearer token belongs to, or null. The token is hashed and looked up by its
   * hash, so the comparison happens on a digest inside the database index, never on the key.
   * Retired agents are returned too: their callers answer 410, not 401.
   */
  async authenticate(token: string): Promise<Agent | null> {
    if (!token.startsWith(AGENT_KEY_PREFIX)) return null;
    const agent = await this.deps.storage.agents.getByApiKeyHash(await hashAgentKey(token));
    return agent ? this.#withStatus(agent) : null;
  }

  /** The counts that block retirement without force. */
  dependencies(id: string): Promise<AgentDependencyCounts> {
    return this.deps.storage.agents.dependencyCounts(id);
  }

  /**
   * Records a heartbeat and the facts it reports. A retired agent gets `gone` (410) and
   * nothing changes. The retired check is made after the update, inside the transaction: the
   * update waits for a concurrent retirement's row lock, so either the heartbeat lands before
   * the retirement or it sees it and rolls back; no heartbeat is ever recorded after retired_at.
   */
  async heartbeat(id: string, input: HeartbeatReport = {}): Promise<Agent> {
    const report = parseInput(agentHeartbeatSchema, input);
    const now = this.deps.clock.now();
    const degraded = (report.failures?.length ?? 0) > 0;
    return this.deps.storage.transaction(async (tx) => {
      const updated = await tx.agents.update(id, {
        last_heartbeat_at: now,
        status: degraded ? 'Degraded' : 'Online',
        ...definedFacts(report),
      });
      if (updated.retired_at !== null) throw gone(id);
      return this.#withStatus(updated);
    });
  }

  /**
   * Retirement, checked in this order: a sentinel agent is `forbidden` and an
   * unknown id `not_found` whatever the options; an agent already retired returns
   * `changed: false` and records nothing (force without a reason included); force without a
   * reason is `validation_failed`; dependencies without force are a `conflict` carrying the
   * counts. With force, the agent's targets are retired with the agent's timestamp and its open
   * jobs cancelled, all in the one transaction that retires the agent.
   */
  async retire(actor: Actor, id: string, input: RetireOptions = {}): Promise<RetireOutcome> {
    const options = parseInput(agentRetireSchema, input);
    if (isSentinelAgentId(id)) {
      throw fail('not_permitted', `agent '${id}' is a reserved discovery source and cannot be retired`);
    }
    const reason = options.reason?.trim() ? options.reason.trim() : undefined;
    return this.deps.storage.transaction(async (tx) => {
      // The agent's row lock before anything is read, so concurrent retirements and
      // heartbeats of this agent serialize behind it.
      const agent = await tx.agents.lockForUpdate(id);
      if (agent.retired_at !== null) return { changed: false, agent: this.#withStatus(agent) };
      if (options.force && !reason) {
        throw validationError([{ field: 'reason', message: 'is required when force is true' }]);
      }
      const dependencies = await tx.agents.dependencyCounts(id);
      const blocked =
        dependencies.active_targets + dependencies.active_certificates + dependencies.pending_jobs > 0;
      if (blocked && !options.force) {
        throw fail(
          'still_referenced',
          `agent '${id}' has active dependencies; retry with force and a reason`,
          {
            extra: { ...dependencies },
          },
        );
      }
      const at = this.deps.clock.now();
      const retired = await tx.agents.update(id, { retired_at: at, retired_reason: reason ?? null });
      await this.audit.record(
        actor,
        {
          action: 'agent_retired',
          category: 'config',
          resource_type: 'agent',
          resource_id: id,
          details: { reason: reason ?? null, force: options.force === true, dependencies },
        },
        tx,
      );
      let cascaded: { targets_retired: number; jobs_cancelled: number } | null = null;
      if (blocked) {
        const targetsRetired = await tx.targets.retireForAgent(id, at, reason ?? 'agent retired');
        const jobsCancelled = await this.jobs.cancelOpenForAgent(tx, id, at);
        cascaded = { targets_retired: targetsRetired, jobs_cancelled: jobsCancelled };
        await this.audit.record(
          actor,
          {
            action: 'agent_retirement_cascaded',
            category: 'config',
            resource_type: 'agent',
            resource_id: id,
            details: { reason: reason ?? null, retired_at: at.toISOString(), ...cascaded, dependencies },
          },
          tx,
        );
      }
      return { changed: true, agent: this.#withStatus(retired), dependencies, cascaded };
    });
  }

  /**
   * The agent's work poll: claims up to 20 due Deployment/Validation jobs (each becomes Running
   * under a lease of `jobLeaseMs`; a job not finished by then is offered again until its
   * attempts run out, then the timeout sweep fails it) and lists the jobs awaiting its CSR.
   * Every item that hands over a private key or a decrypted target config records
   * `job_secrets_released` (what, to which agent, for which job; never the secret) in the
   * transaction of the claim, so a secret never leaves without its audit event.
   */
  async work(id: string): Promise<AgentWork> {
    await this.#requireActive(this.deps.storage, id);
    const now = this.deps.clock.now();
    const agent: Actor = { type: 'agent', id };
    const items = await this.deps.storage.transaction(async (tx) => {
      const claimed = await tx.jobs.claimDue({
        now,
        worker: id,
        leaseMs: this.settings.jobLeaseMs,
        limit: WORK_BATCH,
        types: [...AGENT_JOB_TYPES],
        agentId: id,
      });
      const built: AgentWorkItem[] = [];
      for (const job of claimed) {
        const item = await this.#workItem(tx, job);
        await this.#recordRelease(tx, agent, item);
        built.push(item);
      }
      return built;
    });
    const awaiting = (await this.deps.storage.jobs.listOpenForAgent(id, WORK_BATCH)).filter(
      (j) => j.status === 'AwaitingCSR',
    );
    return { jobs: items, awaiting_csr: awaiting };
  }

  /** Counts of unretired agents by computed status, plus the retired ones. */
  async summary(): Promise<Record<AgentStatus, number> & { retired: number; total: number }> {
    const counts = { Online: 0, Offline: 0, Degraded: 0 };
    let page = 1;
    let total = 0;
    for (;;) {
      const batch = await this.deps.storage.agents.list({ retired: false, page, perPage: 500 });
      for (const agent of batch.items) counts[this.#withStatus(agent).status] += 1;
      total = batch.total;
      if (batch.items.length === 0 || page * 500 >= batch.total) break;
      page += 1;
    }
    const retired = (await this.deps.storage.agents.list({ retired: true, perPage: 1 })).total;
    return { ...counts, retired, total };
  }

  /** Throws `not_found` for an unknown agent and `gone` for a retired one. */
  async requireActive(id: string): Promise<Agent> {
    return this.#withStatus(await this.#requireActive(this.deps.storage, id));
  }

  /** The status a reader sees now; see the class comment. */
  computeStatus(
    agent: Pick<Agent, 'id' | 'status' | 'last_heartbeat_at' | 'retired_at'>,
    now = this.deps.clock.now(),
  ): AgentStatus {
    // Sentinel agents are the server's own discovery sources: they never heartbeat, and are as
    // alive as the server answering this request.
    if (isSentinelAgentId(agent.id)) return agent.status;
    if (agent.retired_at !== null || agent.last_heartbeat_at === null) return 'Offline';
    const age = now.getTime() - agent.last_heartbeat_at.getTime();
    if (age > this.settings.offlineAfterMs) return 'Offline';
    if (age > this.settings.degradedAfterMs) return 'Degraded';
    return agent.status === 'Degraded' ? 'Degraded' : 'Online';
  }

  #withStatus(agent: Agent): Agent {
    return { ...agent, status: this.computeStatus(agent) };
  }

  async #requireActive(storage: Storage, id: string): Promise<Agent> {
    const agent = await storage.agents.require(id);
    if (agent.retired_at !== null) throw gone(id);
    return agent;
  }

  async #workItem(tx: Storage, job: Job): Promise<AgentWorkItem> {
    const target = job.target_id ? await tx.targets.getWithConfig(job.target_id) : null;
    let certificate: AgentWorkItem['certificate'] = null;
    const versionId = job.payload.version_id;
    if (job.type === 'Deployment' && typeof versionId === 'string') {
      const version = await tx.versions.getWithKey(versionId);
      if (version) {
        certificate = {
          version_id: version.id,
          serial_number: version.serial_number,
          cert_pem: version.cert_pem,
          chain_pem: version.chain_pem,
          private_key_pem: version.private_key_pem,
        };
      }
    }
    return {
      job,
      target: target ? { id: target.id, name: target.name, type: target.type, config: target.config } : null,
      certificate,
    };
  }

  /** The audit event of a work item that carries secrets: names and ids only. */
  async #recordRelease(tx: Storage, agent: Actor, item: AgentWorkItem): Promise<void> {
    const key = item.certificate?.private_key_pem ? item.certificate : null;
    const configKeys = item.target ? Object.keys(item.target.config).sort() : [];
    if (!key && configKeys.length === 0) return;
    await this.audit.record(
      agent,
      {
        action: 'job_secrets_released',
        category: 'cert_lifecycle',
        resource_type: 'job',
        resource_id: item.job.id,
        details: {
          agent_id: agent.id,
          job_type: item.job.type,
          released: [...(key ? ['private_key'] : []), ...(configKeys.length > 0 ? ['target_config'] : [])],
          ...(key
            ? {
                certificate_id: item.job.certificate_id,
                version_id: key.version_id,
                serial_number: key.serial_number,
              }
            : {}),
          ...(configKeys.length > 0 ? { target_id: item.target?.id, config_keys: configKeys } : {}),
        },
      },
      tx,
    );
  }
}

function definedFacts(report: z.output<typeof agentHeartbeatSchema>): Partial<Agent> {
  const facts: Partial<Agent> = {};
  if (report.hostname !== undefined) facts.hostname = report.hostname;
  if (report.os !== undefined) facts.os = report.os;
  if (report.architecture !== undefined) facts.architecture = report.architecture;
  if (report.ip_address !== undefined) facts.ip_address = report.ip_address;
  if (report.version !== undefined) facts.version = report.version;
  return facts;
}

const gone = (id: string) => fail('gone', `agent '${id}' is retired`);
