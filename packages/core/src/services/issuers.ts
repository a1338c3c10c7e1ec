import { z } from 'zod';
import { type Issuer, issuerConfigSchema, issuerTypeSchema } from '../domain/issuer.js';
import { notFound } from '../errors.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { type Paged, parseInput, stillReferenced } from './input.js';
import { configEvent } from './owners.js';
import { pageQuerySchema } from './paging.js';
import { nameTaken } from './teams.js';

export const issuerCreateSchema = z.object({
  name: z.string().trim().min(1).max(255),
  type: issuerTypeSchema,
  /** Connector settings, credentials included: sealed at rest, write-only over the API. */
  config: issuerConfigSchema.optional(),
  enabled: z.boolean().optional(),
});
export const issuerUpdateSchema = issuerCreateSchema.partial();
export const issuerListSchema = pageQuerySchema.extend({
  type: issuerTypeSchema.optional(),
  enabled: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .or(z.boolean())
    .optional(),
});
export type IssuerCreate = z.input<typeof issuerCreateSchema>;
export type IssuerUpdate = z.input<typeof issuerUpdateSchema>;
export type IssuerListQuery = z.input<typeof issuerListSchema>;

/**
 * Issuers (certificate authorities reached through a connector). The record returned never
 * carries `config`: it may hold credentials, so only the issuing pipeline reads it, through
 * `storage.issuers.getWithConfig`.
 */
export class IssuerService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  async create(input: IssuerCreate, actor: Actor): Promise<Issuer> {
    const data = parseInput(issuerCreateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      const issuer = await tx.issuers
        .create({
          name: data.name,
          type: data.type,
          config: data.config ?? {},
          enabled: data.enabled ?? true,
        })
        .catch(nameTaken(data.name, 'issuer'));
      // Config values are secrets: the audit trail records which keys changed, never values.
      await this.audit.record(actor, configEvent('issuer_created', 'issuer', issuer.id, redact(data)), tx);
      return issuer;
    });
  }

  async get(id: string): Promise<Issuer> {
    const issuer = await this.deps.storage.issuers.get(id);
    if (!issuer) throw notFound('issuer', id);
    return issuer;
  }

  async list(query: IssuerListQuery = {}): Promise<Paged<Issuer>> {
    const q = parseInput(issuerListSchema, query);
    const result = await this.deps.storage.issuers.list({
      page: q.page,
      perPage: q.per_page,
      type: q.type,
      enabled: q.enabled,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  /** `config`, when given, replaces the whole stored config (no merge: a key can be removed). */
  async update(id: string, input: IssuerUpdate, actor: Actor): Promise<Issuer> {
    const data = parseInput(issuerUpdateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.issuers.get(id))) throw notFound('issuer', id);
      const issuer = await tx.issuers.update(id, data).catch(nameTaken(data.name, 'issuer'));
      await this.audit.record(actor, configEvent('issuer_updated', 'issuer', id, redact(data)), tx);
      return issuer;
    });
  }

  async delete(id: string, actor: Actor): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.issuers.get(id))) throw notFound('issuer', id);
      const refused = stillReferenced('issuer', id, await tx.issuers.references(id));
      if (refused) throw refused;
      await tx.issuers.delete(id);
      await this.audit.record(actor, configEvent('issuer_deleted', 'issuer', id), tx);
    });
  }
}

function redact(data: { config?: Record<string, unknown> } & Record<string, unknown>) {
  const { config, ...rest } = data;
  return config === undefined ? rest : { ...rest, config_keys: Object.keys(config).sort() };
}
