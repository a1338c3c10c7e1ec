import {
  newId,
  type PolicyRule,
  type PolicyRuleRepository,
  type PolicyRuleType,
  type PolicyViolation,
  type Severity,
  type ViolationRepository,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import { atomic, type Ctx, defined, toBool } from '../context.js';
import type { PolicyRulesTable, PolicyViolationsTable } from '../schema.js';
import { deleteById, listPage, requireFound, updateById } from './crud.js';

/**
 * Config goes in as JSON text; a string is stored verbatim, so text that is not JSON (an
 * import, a hand edit) survives and comes back as that string for the evaluator to skip.
 */
function configToText(config: unknown): string | null {
  if (config === undefined || config === null) return null;
  return typeof config === 'string' ? config : JSON.stringify(config);
}

function configFromText(text: string | null): unknown {
  if (text === null || text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toRule(r: Selectable<PolicyRulesTable>): PolicyRule {
  return {
    id: r.id,
    name: r.name,
    type: r.type as PolicyRuleType,
    severity: r.severity as Severity,
    config: configFromText(r.config),
    enabled: toBool(r.enabled),
    description: r.description,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function policyRuleRepository(ctx: Ctx): PolicyRuleRepository {
  const get = async (id: string) => {
    const r = await ctx.db.selectFrom('policy_rules').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRule(r) : null;
  };
  const require = requireFound('policy rule', get);
  return {
    get,
    require,
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const rule: PolicyRule = {
        id: input.id ?? newId('policyRule'),
        name: input.name,
        type: input.type,
        severity: input.severity ?? 'Warning',
        config: input.config ?? null,
        enabled: input.enabled ?? true,
        description: input.description ?? null,
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('policy_rules')
        .values({ ...rule, config: configToText(rule.config) })
        .execute();
      return { ...rule, config: configFromText(configToText(rule.config)) };
    },
    async update(id, patch) {
      await require(id);
      await updateById(ctx, 'policy_rules', id, {
        ...defined({
          name: patch.name,
          type: patch.type,
          severity: patch.severity,
          enabled: patch.enabled,
          description: patch.description,
        }),
        ...('config' in patch ? { config: configToText(patch.config) } : {}),
      });
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'policy_rules', id, 'policy rule'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('policy_rules');
      if (query.type !== undefined) base = base.where('type', '=', query.type);
      if (query.enabled !== undefined) base = base.where('enabled', '=', query.enabled);
      return listPage(base, query, (q) => q.selectAll().orderBy('created_at').orderBy('id'), toRule);
    },
  };
}

function toViolation(r: Selectable<PolicyViolationsTable>): PolicyViolation {
  return {
    id: r.id,
    rule_id: r.rule_id,
    rule_type: r.rule_type as PolicyRuleType,
    certificate_id: r.certificate_id,
    severity: r.severity as Severity,
    message: r.message,
    detected_at: r.detected_at,
  };
}

export function violationRepository(ctx: Ctx): ViolationRepository {
  const insert = async (c: Ctx, input: Parameters<ViolationRepository['create']>[0]) => {
    const v: PolicyViolation = {
      ...input,
      id: input.id ?? newId('violation'),
      detected_at: input.detected_at ?? c.clock.now(),
    };
    await c.db.insertInto('policy_violations').values(v).execute();
    return v;
  };
  return {
    create: (input) => insert(ctx, input),
    async get(id) {
      const r = await ctx.db
        .selectFrom('policy_violations')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return r ? toViolation(r) : null;
    },
    async list(query = {}) {
      let base = ctx.db.selectFrom('policy_violations');
      if (query.certificate_id !== undefined) base = base.where('certificate_id', '=', query.certificate_id);
      if (query.rule_id !== undefined) base = base.where('rule_id', '=', query.rule_id);
      if (query.severity !== undefined) base = base.where('severity', '=', query.severity);
      if (query.rule_type !== undefined) base = base.where('rule_type', '=', query.rule_type);
      return listPage(
        base,
        query,
        (q) => q.selectAll().orderBy('detected_at', 'desc').orderBy('id'),
        toViolation,
      );
    },
    async replaceForCertificate(certificateId, violations) {
      return atomic(ctx, async (c) => {
        await c.db.deleteFrom('policy_violations').where('certificate_id', '=', certificateId).execute();
        const out: PolicyViolation[] = [];
        for (const v of violations) out.push(await insert(c, { ...v, certificate_id: certificateId }));
        return out;
      });
    },
    delete: (id) => deleteById(ctx, 'policy_violations', id, 'policy violation'),
  };
}
