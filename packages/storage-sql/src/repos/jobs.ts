import {
  JOB_STATUSES,
  type Job,
  type JobRepository,
  type JobStatus,
  type JobType,
  type NewJob,
  newId,
  OPEN_JOB_STATUSES,
  type VerificationStatus,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { atomic, type Ctx, count, defined, parseJson, toNum } from '../context.js';
import { retryOnDeadlock } from '../errors.js';
import type { JobsTable } from '../schema.js';
import { countByStatus, listPage, lockFound, requireFound, updateById } from './crud.js';

function toJob(r: Selectable<JobsTable>): Job {
  return {
    id: r.id,
    type: r.type as JobType,
    status: r.status as JobStatus,
    certificate_id: r.certificate_id,
    target_id: r.target_id,
    agent_id: r.agent_id,
    payload: parseJson(r.payload, {}),
    result: parseJson(r.result, null),
    attempts: toNum(r.attempts),
    max_attempts: toNum(r.max_attempts),
    last_error: r.last_error,
    csr_pem: r.csr_pem,
    scheduled_at: r.scheduled_at,
    started_at: r.started_at,
    completed_at: r.completed_at,
    locked_by: r.locked_by,
    lease_expires_at: r.lease_expires_at,
    verification_status: r.verification_status as VerificationStatus | null,
    verification_detail: r.verification_detail,
    verified_at: r.verified_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function jobRepository(ctx: Ctx): JobRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('jobs').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toJob(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('job', get);
  const build = (input: NewJob): Job => {
    const now = input.created_at ?? ctx.clock.now();
    return {
      id: input.id ?? newId('job'),
      type: input.type,
      status: input.status ?? 'Pending',
      certificate_id: input.certificate_id ?? null,
      target_id: input.target_id ?? null,
      agent_id: input.agent_id ?? null,
      payload: input.payload ?? {},
      result: input.result ?? null,
      attempts: input.attempts ?? 0,
      max_attempts: input.max_attempts ?? 3,
      last_error: input.last_error ?? null,
      csr_pem: input.csr_pem ?? null,
      scheduled_at: input.scheduled_at ?? now,
      started_at: input.started_at ?? null,
      completed_at: input.completed_at ?? null,
      locked_by: input.locked_by ?? null,
      lease_expires_at: input.lease_expires_at ?? null,
      verification_status: input.verification_status ?? null,
      verification_detail: input.verification_detail ?? null,
      verified_at: input.verified_at ?? null,
      created_at: now,
      updated_at: now,
    };
  };
  const toRow = (job: Job) => ({
    ...job,
    payload: JSON.stringify(job.payload),
    result: job.result === null ? null : JSON.stringify(job.result),
  });
  return {
    get,
    require,
    lockForUpdate: lockFound(ctx, 'job', (id) => read(id, true)),
    async create(input) {
      const job = build(input);
      await ctx.db.insertInto('jobs').values(toRow(job)).execute();
      return job;
    },
    async createMany(inputs) {
      const jobs = inputs.map(build);
      if (jobs.length === 0) return [];
      // Multi-row inserts in chunks keep each statement under the engines' parameter limits.
      await atomic(ctx, async (c) => {
        for (let i = 0; i < jobs.length; i += 500) {
          await c.db
            .insertInto('jobs')
            .values(jobs.slice(i, i + 500).map(toRow))
            .execute();
        }
      });
      return jobs;
    },
    async update(id, patch) {
      await require(id);
      const { payload, result, ...rest } = patch;
      await updateById(ctx, 'jobs', id, {
        ...defined(rest),
        ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
        ...(result !== undefined ? { result: result === null ? null : JSON.stringify(result) } : {}),
      });
      return require(id);
    },
    async list(query = {}) {
      let base = ctx.db.selectFrom('jobs');
      if (query.status !== undefined)
        base = base.where('status', 'in', Array.isArray(query.status) ? query.status : [query.status]);
      if (query.type !== undefined) base = base.where('type', '=', query.type);
      if (query.certificate_id !== undefined) base = base.where('certificate_id', '=', query.certificate_id);
      if (query.target_id !== undefined) base = base.where('target_id', '=', query.target_id);
      if (query.agent_id !== undefined) base = base.where('agent_id', '=', query.agent_id);
      if (query.completed_after !== undefined) base = base.where('completed_at', '>=', query.completed_after);
      return listPage(base, query, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), toJob);
    },
    countByStatus() {
      return countByStatus(ctx, 'jobs', JOB_STATUSES);
    },
    async claimDue({ now, worker, leaseMs, limit, types, agentId }) {
      if (limit < 1) return [];
      const claim = async (c: Ctx) => {
        let q = c.db
          .selectFrom('jobs')
          .select('id')
          .where((eb) =>
            eb.or([
              eb.and([eb('status', '=', 'Pending'), eb('scheduled_at', '<=', now)]),
              eb.and([
                eb('status', '=', 'Running'),
                eb('lease_expires_at', '<', now),
                eb('attempts', '<', eb.ref('max_attempts')),
              ]),
            ]),
          );
        if (types && types.length > 0) q = q.where('type', 'in', types);
        if (agentId === null) q = q.where('agent_id', 'is', null);
        else if (agentId !== undefined) q = q.where('agent_id', '=', agentId);
        const ids = (
          await q.orderBy('scheduled_at').orderBy('id').limit(limit).forUpdate().skipLocked().execute()
        ).map((r) => r.id);
        if (ids.length === 0) return [];
        await c.db
          .updateTable('jobs')
          .set((eb) => ({
            status: 'Running',
            attempts: eb('attempts', '+', 1),
            locked_by: worker,
            lease_expires_at: new Date(now.getTime() + leaseMs),
            started_at: eb.fn.coalesce('started_at', eb.val(now)),
            updated_at: now,
          }))
          .where('id', 'in', ids)
          .execute();
        const rows = await c.db
          .selectFrom('jobs')
          .selectAll()
          .where('id', 'in', ids)
          .orderBy('scheduled_at')
          .orderBy('id')
          .execute();
        return rows.map(toJob);
      };
      // Inside a caller's transaction a deadlock must surface to that caller; on our own we
      // retry the whole short claim.
      if (ctx.inTx) return claim(ctx);
      return retryOnDeadlock(() =>
        ctx.db
          .transaction()
          .setIsolationLevel('read committed')
          .execute((trx) => claim({ ...ctx, db: trx, inTx: true })),
      );
    },
    async listOpenForAgent(agentId, limit = 100) {
      const rows = await ctx.db
        .selectFrom('jobs')
        .selectAll()
        .where('agent_id', '=', agentId)
        .where('status', 'in', ['Pending', 'AwaitingCSR'])
        .orderBy('scheduled_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toJob);
    },
    async failExpired(now, reason) {
      return atomic(ctx, async (c) => {
        const rows = await c.db
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', 'Running')
          .where('lease_expires_at', '<', now)
          .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
          .forUpdate()
          .skipLocked()
          .execute();
        const ids = rows.map((r) => r.id);
        if (ids.length === 0) return [];
        await c.db
          .updateTable('jobs')
          .set({
            status: 'Failed',
            last_error: reason,
            completed_at: now,
            locked_by: null,
            lease_expires_at: null,
            updated_at: now,
          })
          .where('id', 'in', ids)
          .execute();
        return (await c.db.selectFrom('jobs').selectAll().where('id', 'in', ids).orderBy('id').execute()).map(
          toJob,
        );
      });
    },
    async cancelOpenForCertificate(certificateId, at) {
      const res = await ctx.db
        .updateTable('jobs')
        .set({
          status: 'Cancelled',
          completed_at: at,
          locked_by: null,
          lease_expires_at: null,
          updated_at: at,
        })
        .where('certificate_id', '=', certificateId)
        .where('status', 'in', [...OPEN_JOB_STATUSES])
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
  };
}
