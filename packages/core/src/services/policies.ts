import { z } from 'zod';
import type { ManagedCertificate } from '../domain/certificate.js';
import {
  type PolicyRule,
  type PolicyRuleType,
  type PolicyViolation,
  policyRuleTypeSchema,
  severitySchema,
} from '../domain/policy.js';
import type { RenewalPolicy } from '../domain/renewal-policy.js';
import { notFound, validationError } from '../errors.js';
import { RULE_CONFIG_SCHEMAS } from '../policy/config.js';
import { type Evaluation, evaluateRules } from '../policy/engine.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import { configEvent } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { type Paged, parseInput } from './input.js';
import { pageQuerySchema } from './paging.js';

/** `config` is a JSON object checked against the rule type's keys, or null. */
const configSchema = z.record(z.string(), z.unknown()).nullable();

export const policyRuleCreateSchema = z.object({
  name: z.string().trim().min(1).max(255),
  type: policyRuleTypeSchema,
  severity: severitySchema.optional().describe('default Warning'),
  config: configSchema.optional(),
  enabled: z.boolean().optional(),
  description: z.string().max(2000).nullable().optional(),
});
/** Omitted fields keep their stored values; in particular severity. */
export const policyRuleUpdateSchema = policyRuleCreateSchema.partial();
export const policyRuleListSchema = pageQuerySchema.extend({
  type: policyRuleTypeSchema.optional(),
  enabled: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .or(z.boolean())
    .optional(),
});
export const violationListSchema = pageQuerySchema.extend({
  certificate_id: z.string().max(128).optional(),
  rule_id: z.string().max(128).optional(),
  severity: severitySchema.optional(),
  rule_type: policyRuleTypeSchema.optional(),
});
export type PolicyRuleCreate = z.input<typeof policyRuleCreateSchema>;
export type PolicyRuleUpdate = z.input<typeof policyRuleUpdateSchema>;
export type ViolationListQuery = z.input<typeof violationListSchema>;

/** Result of evaluating one certificate. */
export interface CertificateEvaluation extends Evaluation {
  certificate_id: string;
}

/** Result of evaluating every certificate. */
export interface EvaluationSummary {
  evaluated: number;
  violations: number;
  skipped: number;
}

const BATCH = 500;

/** Policy rules: CRUD; evaluation lives in PolicyEvaluationService. */
export class PolicyRuleService {
  #revision = 0;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  /**
   * Grows after every create, update and delete through this service has committed (or
   * failed): the issuance path's cache of the enabled rules (revisioned-cache.ts) that
   * remembers the revision it read at knows whether this process changed a rule since.
   */
  get revision(): number {
    return this.#revision;
  }

  async #changing<T>(change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } finally {
      this.#revision++;
    }
  }

  async create(actor: Actor, input: PolicyRuleCreate): Promise<PolicyRule> {
    const data = parseInput(policyRuleCreateSchema, input);
    const config = checkConfig(data.type, data.config ?? null);
    return this.#changing(() =>
      this.deps.storage.transaction(async (tx) => {
        const rule = await tx.policyRules.create({
          name: data.name,
          type: data.type,
          severity: data.severity ?? 'Warning',
          config,
          enabled: data.enabled ?? true,
          description: data.description ?? null,
        });
        await this.audit.record(actor, configEvent('policy_rule_created', 'policy_rule', rule.id, data), tx);
        return rule;
      }),
    );
  }

  async get(id: string): Promise<PolicyRule> {
    const rule = await this.deps.storage.policyRules.get(id);
    if (!rule) throw notFound('policy rule', id);
    return rule;
  }

  async list(query: z.input<typeof policyRuleListSchema> = {}): Promise<Paged<PolicyRule>> {
    const q = parseInput(policyRuleListSchema, query);
    const result = await this.deps.storage.policyRules.list({
      page: q.page,
      perPage: q.per_page,
      type: q.type,
      enabled: q.enabled,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  async update(actor: Actor, id: string, input: PolicyRuleUpdate): Promise<PolicyRule> {
    const data = parseInput(policyRuleUpdateSchema, input);
    return this.#changing(() =>
      this.deps.storage.transaction(async (tx) => {
        const current = await tx.policyRules.get(id);
        if (!current) throw notFound('policy rule', id);
        const type = data.type ?? current.type;
        // A changed type must still fit the config the rule keeps, so both are checked together.
        const config =
          data.config !== undefined || data.type !== undefined
            ? checkConfig(type, data.config !== undefined ? data.config : current.config)
            : undefined;
        // Only keys the caller sent: storage treats a present `config: undefined` as "clear it".
        const { config: _sent, ...rest } = data;
        const rule = await tx.policyRules.update(id, config === undefined ? rest : { ...rest, config });
        await this.audit.record(actor, configEvent('policy_rule_updated', 'policy_rule', id, data), tx);
        return rule;
      }),
    );
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.#changing(() =>
      this.deps.storage.transaction(async (tx) => {
        if (!(await tx.policyRules.get(id))) throw notFound('policy rule', id);
        // Its violations go with it: the storage deletes them in the same statement (cascade).
        await tx.policyRules.delete(id);
        await this.audit.record(actor, configEvent('policy_rule_deleted', 'policy_rule', id), tx);
      }),
    );
  }
}

/**
 * Validates a config for a type: null and `{}` are allowed (they yield the missing-configuration
 * violation), anything else must use the type's key with values of the right shape. Field names
 * in errors are prefixed with `config.`.
 */
function checkConfig(type: PolicyRuleType, config: unknown): Record<string, unknown> | null {
  if (config === null || config === undefined) return null;
  if (typeof config !== 'object' || Array.isArray(config)) {
    throw validationError([{ field: 'config', message: 'must be a JSON object or null' }]);
  }
  const parsed = RULE_CONFIG_SCHEMAS[type].safeParse(config);
  if (!parsed.success) {
    throw validationError(
      parsed.error.issues.map((issue) => {
        const keys = (issue as { keys?: string[] }).keys;
        const path = issue.path.length > 0 ? issue.path.join('.') : (keys?.[0] ?? '');
        return {
          field: path === '' ? 'config' : `config.${path}`,
          message: issue.code === 'unrecognized_keys' ? `is not a ${type} config key` : issue.message,
        };
      }),
    );
  }
  return parsed.data as Record<string, unknown>;
}

/** Violations (read side). */
export class ViolationService {
  constructor(private readonly deps: ServiceDeps) {}

  async list(query: ViolationListQuery = {}): Promise<Paged<PolicyViolation>> {
    const q = parseInput(violationListSchema, query);
    const result = await this.deps.storage.violations.list({
      page: q.page,
      perPage: q.per_page,
      certificate_id: q.certificate_id,
      rule_id: q.rule_id,
      severity: q.severity,
      rule_type: q.rule_type,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  async get(id: string): Promise<PolicyViolation> {
    const violation = await this.deps.storage.violations.get(id);
    if (!violation) throw notFound('violation', id);
    return violation;
  }
}

/**
 * Runs the rules against certificates and stores what they find. Each certificate's violations
 * are replaced as a whole, so a fixed problem disappears on the next evaluation.
 */
export class PolicyEvaluationService {
  constructor(private readonly deps: ServiceDeps) {}

  /**
   * Evaluates one certificate (after create, update or issuance). Pass the caller's transaction,
   * and the certificate when the caller has just written it in that transaction (no re-read).
   * `known.rules` are the enabled rules when the caller already read them (`enabledRules`) for
   * the same operation; `known.created` says the certificate was created in this transaction,
   * so it has no stored violations to replace.
   */
  async evaluateCertificate(
    certificateId: string,
    tx: Storage = this.deps.storage,
    current?: ManagedCertificate,
    known: { rules?: readonly PolicyRule[]; created?: boolean } = {},
  ): Promise<CertificateEvaluation> {
    const certificate = current?.id === certificateId ? current : await tx.certificates.get(certificateId);
    if (!certificate) throw notFound('certificate', certificateId);
    const rules = known.rules ?? (await loadRules(tx));
    // Only RenewalLeadTime reads the renewal policy; skip the read when no such rule is active.
    const needsPolicy = rules.some((r) => r.enabled && r.type === 'RenewalLeadTime');
    const renewalPolicy = needsPolicy ? await tx.renewalPolicies.get(certificate.renewal_policy_id) : null;
    return this.apply(tx, rules, certificate, renewalPolicy, known.created === true);
  }

  /** Every enabled rule, read once for an operation that both checks names and evaluates. */
  enabledRules(storage: Storage = this.deps.storage): Promise<PolicyRule[]> {
    return loadRules(storage);
  }

  /**
   * Evaluates every certificate: rules and renewal policies are loaded once, certificates are
   * read a batch at a time in id order, so memory stays flat however large the inventory is.
   */
  async evaluateAll(): Promise<EvaluationSummary> {
    const storage = this.deps.storage;
    const rules = await loadRules(storage);
    const policies = new Map<string, RenewalPolicy>();
    for (let page = 1; ; page += 1) {
      const result = await storage.renewalPolicies.list({ page, perPage: BATCH });
      for (const p of result.items) policies.set(p.id, p);
      if (result.items.length < BATCH) break;
    }
    const summary: EvaluationSummary = { evaluated: 0, violations: 0, skipped: 0 };
    let afterId: string | undefined;
    for (;;) {
      const ids = await storage.certificates.listIds({}, { afterId, limit: BATCH });
      if (ids.length === 0) break;
      afterId = ids[ids.length - 1];
      const page = await storage.certificates.list({ ids, perPage: BATCH, sort: 'created_at' });
      for (const certificate of page.items) {
        const found = await this.apply(
          storage,
          rules,
          certificate,
          policies.get(certificate.renewal_policy_id) ?? null,
        );
        summary.evaluated += 1;
        summary.violations += found.violations.length;
        summary.skipped += found.skipped.length;
      }
    }
    this.deps.logger.info(
      { ...summary, rules: rules.length },
      'policy evaluation of all certificates finished',
    );
    return summary;
  }

  private async apply(
    tx: Storage,
    rules: readonly PolicyRule[],
    certificate: ManagedCertificate,
    renewalPolicy: RenewalPolicy | null,
    created = false,
  ): Promise<CertificateEvaluation> {
    // Only CertificateLifetime reads version data; skip the read when no such rule is active.
    const needsVersion = rules.some((r) => r.enabled && r.type === 'CertificateLifetime');
    const version =
      needsVersion && certificate.current_version_id
        ? await tx.versions.get(certificate.current_version_id)
        : null;
    const evaluation = evaluateRules(rules, { certificate, version, renewalPolicy });
    for (const { error, ...skipped } of evaluation.skipped) {
      this.deps.logger.warn(
        { ...skipped, certificate_id: certificate.id, ...(error === undefined ? {} : { err: error }) },
        'policy rule skipped',
      );
    }
    const found = evaluation.violations.map((v) => ({ ...v, certificate_id: certificate.id }));
    if (!created) await tx.violations.replaceForCertificate(certificate.id, found);
    // Created in the caller's transaction: nothing stored yet to replace.
    else for (const v of found) await tx.violations.create(v);
    return { certificate_id: certificate.id, ...evaluation };
  }
}

async function loadRules(storage: Storage): Promise<PolicyRule[]> {
  const rules: PolicyRule[] = [];
  for (let page = 1; ; page += 1) {
    const result = await storage.policyRules.list({ page, perPage: BATCH, enabled: true });
    rules.push(...result.items);
    if (result.items.length < BATCH) return rules;
  }
}
