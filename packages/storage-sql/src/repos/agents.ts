import {
  type Agent,
  type AgentRepository,
  type AgentStatus,
  type DeploymentTarget,
  newId,
  OPEN_JOB_STATUSES,
  type TargetConfig,
  type TargetRepository,
  type TargetType,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { type Ctx, count, defined, toBool } from '../context.js';
import type { AgentsTable, TargetsTable } from '../schema.js';
import { deleteById, listPage, lockFound, requireFound, updateById } from './crud.js';

// Every column but api_key_hash: the hash must never reach a record.
const AGENT_COLUMNS = [
  'id',
  'name',
  'hostname',
  'status',
  'last_heartbeat_at',
  'registered_at',
  'os',
  'architecture',
  'ip_address',
  'version',
  'retired_at',
  'retired_reason',
] as const;

function toAgent(r: Pick<Selectable<AgentsTable>, (typeof AGENT_COLUMNS)[number]>): Agent {
  return {
    id: r.id,
    name: r.name,
    hostname: r.hostname,
    status: r.status as AgentStatus,
    last_heartbeat_at: r.last_heartbeat_at,
    registered_at: r.registered_at,
    os: r.os,
    architecture: r.architecture,
    ip_address: r.ip_address,
    version: r.version,
    retired_at: r.retired_at,
    retired_reason: r.retired_reason,
  };
}

export function agentRepository(ctx: Ctx): AgentRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('agents').select(AGENT_COLUMNS).where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toAgent(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('agent', get);
  return {
    get,
    require,
    lockForUpdate: lockFound(ctx, 'agent', (id) => read(id, true)),
    async create(input) {
      const now = ctx.clock.now();
      const agent: Agent = {
        id: input.id ?? newId('agent'),
        name: input.name,
        hostname: input.hostname,
        status: input.status ?? 'Offline',
        last_heartbeat_at: input.last_heartbeat_at ?? null,
        registered_at: input.registered_at ?? now,
        os: input.os,
        architecture: input.architecture,
        ip_address: input.ip_address,
        version: input.version,
        retired_at: null,
        retired_reason: null,
      };
      await ctx.db
        .insertInto('agents')
        .values({ ...agent, api_key_hash: input.api_key_hash, updated_at: now })
        .execute();
      return agent;
    },
    async getByApiKeyHash(hash) {
      const r = await ctx.db
        .selectFrom('agents')
        .select(AGENT_COLUMNS)
        .where('api_key_hash', '=', hash)
        .executeTakeFirst();
      return r ? toAgent(r) : null;
    },
    async update(id, patch) {
      await require(id);
      await updateById(
        ctx,
        'agents',
        id,
        defined({
          name: patch.name,
          hostname: patch.hostname,
          status: patch.status,
          last_heartbeat_at: patch.last_heartbeat_at,
          os: patch.os,
          architecture: patch.architecture,
          ip_address: patch.ip_address,
          version: patch.version,
          api_key_hash: patch.api_key_hash,
          retired_at: patch.retired_at,
          retired_reason: patch.retired_reason,
        }),
      );
      return require(id);
    },
    async list(query = {}) {
      let base = ctx.db.selectFrom('agents');
      if (query.retired === true) base = base.where('retired_at', 'is not', null);
      if (query.retired === false) base = base.where('retired_at', 'is', null);
      if (query.status !== undefined) base = base.where('status', '=', query.status);
      const order = query.retired === true ? 'retired_at' : 'registered_at';
      return listPage(
        base,
        query,
        (q) => q.select(AGENT_COLUMNS).orderBy(order, 'desc').orderBy('id'),
        toAgent,
      );
    },
    async dependencyCounts(id) {
      const targets = await ctx.db
        .selectFrom('deployment_targets')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agent_id', '=', id)
        .where('retired_at', 'is', null)
        .executeTakeFirst();
      const certs = await ctx.db
        .selectFrom('certificate_targets')
        .innerJoin('deployment_targets', 'deployment_targets.id', 'certificate_targets.target_id')
        .innerJoin('certificates', 'certificates.id', 'certificate_targets.certificate_id')
        .select((eb) => eb.fn.count('certificate_targets.certificate_id').distinct().as('n'))
        .where('deployment_targets.agent_id', '=', id)
        .where('deployment_targets.retired_at', 'is', null)
        .where('certificates.status', 'not in', ['Archived', 'Revoked', 'Expired'])
        .executeTakeFirst();
      const jobs = await ctx.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agent_id', '=', id)
        .where('status', 'in', [...OPEN_JOB_STATUSES])
        .executeTakeFirst();
      return { active_targets: count(targets), active_certificates: count(certs), pending_jobs: count(jobs) };
    },
  };
}

export const targetConfigContext = (id: string) => `target:${id}:config`;

const TARGET_COLUMNS = [
  'id',
  'agent_id',
  'name',
  'type',
  'enabled',
  'retired_at',
  'retired_reason',
  'created_at',
  'updated_at',
] as const;

function toTarget(r: Pick<Selectable<TargetsTable>, (typeof TARGET_COLUMNS)[number]>): DeploymentTarget {
  return {
    id: r.id,
    agent_id: r.agent_id,
    name: r.name,
    type: r.type as TargetType,
    enabled: toBool(r.enabled),
    retired_at: r.retired_at,
    retired_reason: r.retired_reason,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function targetRepository(ctx: Ctx): TargetRepository {
  const get = async (id: string) => {
    const r = await ctx.db
      .selectFrom('deployment_targets')
      .select(TARGET_COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toTarget(r) : null;
  };
  const require = requireFound('deployment target', get);
  return {
    get,
    require,
    async getWithConfig(id) {
      const r = await ctx.db
        .selectFrom('deployment_targets')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      if (!r) return null;
      const config = JSON.parse(await ctx.box.open(r.config_sealed, targetConfigContext(id))) as TargetConfig;
      return { ...toTarget(r), config };
    },
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const target: DeploymentTarget = {
        id: input.id ?? newId('target'),
        agent_id: input.agent_id,
        name: input.name,
        type: input.type,
        enabled: input.enabled ?? true,
        retired_at: input.retired_at ?? null,
        retired_reason: input.retired_reason ?? null,
        created_at: now,
        updated_at: now,
      };
      const config_sealed = await ctx.box.seal(
        JSON.stringify(input.config ?? {}),
        targetConfigContext(target.id),
      );
      await ctx.db
        .insertInto('deployment_targets')
        .values({ ...target, config_sealed })
        .execute();
      return target;
    },
    async update(id, patch) {
      await require(id);
      const config_sealed =
        patch.config === undefined
          ? undefined
          : await ctx.box.seal(JSON.stringify(patch.config), targetConfigContext(id));
      await updateById(
        ctx,
        'deployment_targets',
        id,
        defined({
          name: patch.name,
          type: patch.type,
          enabled: patch.enabled,
          retired_at: patch.retired_at,
          retired_reason: patch.retired_reason,
          config_sealed,
        }),
      );
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'deployment_targets', id, 'deployment target'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('deployment_targets');
      if (query.agent_id !== undefined) base = base.where('agent_id', '=', query.agent_id);
      if (query.type !== undefined) base = base.where('type', '=', query.type);
      if (query.retired === true) base = base.where('retired_at', 'is not', null);
      if (query.retired === false) base = base.where('retired_at', 'is', null);
      return listPage(
        base,
        query,
        (q) => q.select(TARGET_COLUMNS).orderBy('created_at').orderBy('id'),
        toTarget,
      );
    },
    async retireForAgent(agentId, at, reason) {
      const res = await ctx.db
        .updateTable('deployment_targets')
        .set({ retired_at: at, retired_reason: reason, updated_at: ctx.clock.now() })
        .where('agent_id', '=', agentId)
        .where('retired_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
    async listForCertificate(certificateId) {
      const rows = await ctx.db
        .selectFrom('deployment_targets')
        .innerJoin('certificate_targets', 'certificate_targets.target_id', 'deployment_targets.id')
        .select(TARGET_COLUMNS.map((c) => `deployment_targets.${c}` as const))
        .where('certificate_targets.certificate_id', '=', certificateId)
        .where('deployment_targets.retired_at', 'is', null)
        .orderBy('deployment_targets.id')
        .execute();
      return rows.map(toTarget);
    },
  };
}
