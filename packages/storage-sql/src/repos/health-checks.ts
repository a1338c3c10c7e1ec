import {
  HEALTH_STATUSES,
  type HealthCheck,
  type HealthCheckRepository,
  type HealthCheckResult,
  type HealthStatus,
  newId,
  notFound,
  type ObservedCertificate,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { atomic, type Ctx, count, defined, likeContains, parseJson, toBool, toNum } from '../context.js';
import type { HealthCheckResultsTable, HealthChecksTable } from '../schema.js';
import { countByStatus, listPage, lockFound, requireFound, updateById } from './crud.js';

const num = (v: number | null): number | null => (v === null ? null : toNum(v));

function toCheck(r: Selectable<HealthChecksTable>): HealthCheck {
  const observed = parseJson<(Omit<ObservedCertificate, 'not_after'> & { not_after: string }) | null>(
    r.observed,
    null,
  );
  return {
    id: r.id,
    name: r.name,
    host: r.host,
    port: toNum(r.port),
    sni: r.sni,
    expected_fingerprint: r.expected_fingerprint,
    certificate_id: r.certificate_id,
    interval_seconds: toNum(r.interval_seconds),
    deployment_window_seconds: toNum(r.deployment_window_seconds),
    enabled: toBool(r.enabled),
    status: r.status as HealthStatus,
    consecutive_failures: toNum(r.consecutive_failures),
    last_checked_at: r.last_checked_at,
    next_check_at: r.next_check_at,
    last_success_at: r.last_success_at,
    last_failure_at: r.last_failure_at,
    last_error: r.last_error,
    status_changed_at: r.status_changed_at,
    observed: observed ? { ...observed, not_after: new Date(observed.not_after) } : null,
    handshake_ms: num(r.handshake_ms),
    tls_version: r.tls_version,
    cipher: r.cipher,
    acknowledged_at: r.acknowledged_at,
    acknowledged_by: r.acknowledged_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function toResult(r: Selectable<HealthCheckResultsTable>): HealthCheckResult {
  return {
    id: r.id,
    check_id: r.check_id,
    checked_at: r.checked_at,
    status: r.status as HealthStatus,
    success: toBool(r.success),
    fingerprint_sha256: r.fingerprint_sha256,
    tls_version: r.tls_version,
    cipher: r.cipher,
    handshake_ms: num(r.handshake_ms),
    error: r.error,
  };
}

export function healthCheckRepository(ctx: Ctx): HealthCheckRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('health_checks').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toCheck(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('health check', get);
  return {
    get,
    require,
    lockForUpdate: lockFound(ctx, 'health check', (id) => read(id, true)),
    async create(input) {
      const now = ctx.clock.now();
      const check: HealthCheck = {
        id: input.id ?? newId('healthCheck'),
        name: input.name,
        host: input.host,
        port: input.port,
        sni: input.sni,
        expected_fingerprint: input.expected_fingerprint,
        certificate_id: input.certificate_id,
        interval_seconds: input.interval_seconds,
        deployment_window_seconds: input.deployment_window_seconds,
        enabled: input.enabled,
        status: 'healthy',
        consecutive_failures: 0,
        last_checked_at: null,
        next_check_at: input.next_check_at ?? null,
        last_success_at: null,
        last_failure_at: null,
        last_error: null,
        status_changed_at: now,
        observed: null,
        handshake_ms: null,
        tls_version: null,
        cipher: null,
        acknowledged_at: null,
        acknowledged_by: null,
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('health_checks')
        .values({ ...check, observed: null })
        .execute();
      return check;
    },
    async update(id, patch) {
      await require(id);
      const { observed, ...rest } = patch;
      await updateById(ctx, 'health_checks', id, {
        ...defined(rest),
        ...(observed !== undefined ? { observed: observed === null ? null : JSON.stringify(observed) } : {}),
      });
      return require(id);
    },
    async delete(id) {
      await atomic(ctx, async (c) => {
        const res = await c.db.deleteFrom('health_checks').where('id', '=', id).executeTakeFirst();
        if (Number(res.numDeletedRows) === 0) throw notFound('health check', id);
        await c.db.deleteFrom('health_check_results').where('check_id', '=', id).execute();
      });
    },
    async list(query = {}) {
      let base = ctx.db.selectFrom('health_checks');
      if (query.status !== undefined) base = base.where('status', '=', query.status);
      if (query.enabled !== undefined) base = base.where('enabled', '=', query.enabled);
      if (query.certificate_id !== undefined) base = base.where('certificate_id', '=', query.certificate_id);
      if (query.search !== undefined) {
        const like = likeContains(query.search);
        base = base.where((eb) =>
          eb.or([eb(eb.fn('lower', ['name']), 'like', like), eb(eb.fn('lower', ['host']), 'like', like)]),
        );
      }
      return listPage(base, query, (q) => q.selectAll().orderBy('name').orderBy('id'), toCheck);
    },
    async due(now, limit) {
      const rows = await ctx.db
        .selectFrom('health_checks')
        .selectAll()
        .where('enabled', '=', true)
        .where((eb) => eb.or([eb('next_check_at', 'is', null), eb('next_check_at', '<=', now)]))
        .orderBy('next_check_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toCheck);
    },
    countByStatus() {
      return countByStatus(ctx, 'health_checks', HEALTH_STATUSES);
    },
    async countUnacknowledged() {
      return count(
        await ctx.db
          .selectFrom('health_checks')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '!=', 'healthy')
          .where('acknowledged_at', 'is', null)
          .executeTakeFirst(),
      );
    },
    async listForCertificate(certificateId) {
      const rows = await ctx.db
        .selectFrom('health_checks')
        .selectAll()
        .where('certificate_id', '=', certificateId)
        .orderBy('id')
        .execute();
      return rows.map(toCheck);
    },
    async addResult(input) {
      const result: HealthCheckResult = { ...input, id: input.id ?? newId('healthCheckResult') };
      await ctx.db.insertInto('health_check_results').values(result).execute();
      return result;
    },
    async listResults(checkId, page = {}) {
      const base = ctx.db.selectFrom('health_check_results').where('check_id', '=', checkId);
      return listPage(
        base,
        page,
        (q) => q.selectAll().orderBy('checked_at', 'desc').orderBy('id', 'desc'),
        toResult,
      );
    },
    async pruneResults(before) {
      const res = await ctx.db
        .deleteFrom('health_check_results')
        .where('checked_at', '<', before)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
