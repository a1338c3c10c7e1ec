import { z } from 'zod';
import { idSchema, newId, slugify } from '../domain/common.js';
import { RENEWAL_POLICY_LIMITS as L, type RenewalPolicy } from '../domain/renewal-policy.js';
import { fail, notFound } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import { configEvent } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { nameTaken, type Paged, parseInput, stillReferenced } from './input.js';
import { pageQuerySchema } from './paging.js';

const fields = {
  name: z.string().trim().min(1).max(L.nameMax),
  renewal_window_days: z.number().int().min(L.windowDays.min).max(L.windowDays.max),
  max_retries: z.number().int().min(L.maxRetries.min).max(L.maxRetries.max).nullable(),
  retry_interval_seconds: z
    .number()
    .int()
    .min(L.retryIntervalSeconds.min)
    .max(L.retryIntervalSeconds.max)
    .describe('seconds'),
  alert_thresholds_days: z
    .array(z.number().int().min(L.alertThresholdDays.min).max(L.alertThresholdDays.max))
    .max(32),
};

/** Only `name` is required; the defaults are applied by the service. */
export const renewalPolicyCreateSchema = z.object({
  id: idSchema.optional().describe('defaults to rp-<slug of name>'),
  name: fields.name,
  renewal_window_days: fields.renewal_window_days.optional(),
  max_retries: fields.max_retries.optional(),
  retry_interval_seconds: fields.retry_interval_seconds.optional(),
  alert_thresholds_days: fields.alert_thresholds_days.optional(),
});
/** PUT replaces the fields it names; omitted fields keep their stored values. */
export const renewalPolicyUpdateSchema = z.object({
  name: fields.name.optional(),
  renewal_window_days: fields.renewal_window_days.optional(),
  max_retries: fields.max_retries.optional(),
  retry_interval_seconds: fields.retry_interval_seconds.optional(),
  alert_thresholds_days: fields.alert_thresholds_days.optional(),
});
export const renewalPolicyListSchema = pageQuerySchema.extend({
  search: z.string().max(255).optional().describe('case-insensitive substring of the name'),
});
export type RenewalPolicyCreate = z.input<typeof renewalPolicyCreateSchema>;
export type RenewalPolicyUpdate = z.input<typeof renewalPolicyUpdateSchema>;

/** Renewal policies. */
export class RenewalPolicyService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  async create(actor: Actor, input: RenewalPolicyCreate): Promise<RenewalPolicy> {
    const data = parseInput(renewalPolicyCreateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      await assertNameFree(tx, data.name);
      let id = data.id;
      if (id !== undefined) {
        if (await tx.renewalPolicies.get(id)) {
          throw fail('duplicate', `renewal policy '${id}' already exists`, {
            extra: { resource: 'renewal policy', id },
          });
        }
      } else {
        id = await this.generatedId(tx, data.name);
      }
      const policy = await tx.renewalPolicies
        .create({
          id,
          name: data.name,
          renewal_window_days: data.renewal_window_days ?? L.windowDays.default,
          max_retries: data.max_retries ?? null,
          retry_interval_seconds: data.retry_interval_seconds ?? L.retryIntervalSeconds.default,
          alert_thresholds_days: data.alert_thresholds_days ?? [...L.alertThresholdDays.default],
        })
        .catch(nameTaken(data.name, 'renewal policy'));
      await this.audit.record(actor, configEvent('renewal_policy_created', 'renewal_policy', id, data), tx);
      return policy;
    });
  }

  async get(id: string): Promise<RenewalPolicy> {
    const policy = await this.deps.storage.renewalPolicies.get(id);
    if (!policy) throw notFound('renewal policy', id);
    return policy;
  }

  async list(query: z.input<typeof renewalPolicyListSchema> = {}): Promise<Paged<RenewalPolicy>> {
    const q = parseInput(renewalPolicyListSchema, query);
    const result = await this.deps.storage.renewalPolicies.list({
      page: q.page,
      perPage: q.per_page,
      search: q.search,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  async update(actor: Actor, id: string, input: RenewalPolicyUpdate): Promise<RenewalPolicy> {
    const data = parseInput(renewalPolicyUpdateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.renewalPolicies.get(id))) throw notFound('renewal policy', id);
      if (data.name !== undefined) await assertNameFree(tx, data.name, id);
      const policy = await tx.renewalPolicies.update(id, data).catch(nameTaken(data.name, 'renewal policy'));
      await this.audit.record(actor, configEvent('renewal_policy_updated', 'renewal_policy', id, data), tx);
      return policy;
    });
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.renewalPolicies.get(id))) throw notFound('renewal policy', id);
      const refused = stillReferenced('renewal policy', id, await tx.renewalPolicies.references(id));
      if (refused) throw refused;
      await tx.renewalPolicies.delete(id);
      await this.audit.record(actor, configEvent('renewal_policy_deleted', 'renewal_policy', id), tx);
    });
  }

  /**
   * `rp-<slug>`; a name that slugs to nothing (only punctuation or non-Latin letters) gets a
   * random id instead. Two names can slug alike ("Web TLS" and "web-tls") — the id is not what
   * the caller asked for in that case, so the later one gets `-2`, `-3` … rather than a 409.
   */
  private async generatedId(tx: Storage, name: string): Promise<string> {
    const slug = slugify(name);
    if (slug === '') return newId('renewalPolicy');
    const base = `rp-${slug}`;
    for (let n = 1; n < 1000; n += 1) {
      const candidate = n === 1 ? base : `${base}-${n}`;
      if (!(await tx.renewalPolicies.get(candidate))) return candidate;
    }
    return newId('renewalPolicy');
  }
}

async function assertNameFree(tx: Storage, name: string, exceptId?: string): Promise<void> {
  const holder = await tx.renewalPolicies.getByName(name);
  if (holder && holder.id !== exceptId) {
    throw fail('duplicate', `a renewal policy named '${name}' already exists ('${holder.id}')`, {
      extra: { resource: 'renewal policy', id: holder.id, name },
    });
  }
}
