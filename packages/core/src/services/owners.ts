import { z } from 'zod';
import type { Owner } from '../domain/owner.js';
import { notFound } from '../errors.js';
import { type AuditService, configEvent } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { type Paged, parseInput, stillReferenced } from './input.js';
import { pageQuerySchema } from './paging.js';

export const ownerCreateSchema = z.object({
  name: z.string().trim().min(1).max(255),
  email: z.email().max(320).nullable().optional(),
});
export const ownerUpdateSchema = ownerCreateSchema.partial();
export const ownerListSchema = pageQuerySchema.extend({
  search: z.string().max(255).optional().describe('case-insensitive substring of the name'),
});
export type OwnerCreate = z.input<typeof ownerCreateSchema>;
export type OwnerUpdate = z.input<typeof ownerUpdateSchema>;
export type OwnerListQuery = z.input<typeof ownerListSchema>;

/** Owners: the people or mailboxes answerable for certificates. */
export class OwnerService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  async create(actor: Actor, input: OwnerCreate): Promise<Owner> {
    const data = parseInput(ownerCreateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      const owner = await tx.owners.create({ name: data.name, email: data.email ?? null });
      await this.audit.record(actor, configEvent('owner_created', 'owner', owner.id, data), tx);
      return owner;
    });
  }

  async get(id: string): Promise<Owner> {
    const owner = await this.deps.storage.owners.get(id);
    if (!owner) throw notFound('owner', id);
    return owner;
  }

  async list(query: OwnerListQuery = {}): Promise<Paged<Owner>> {
    const q = parseInput(ownerListSchema, query);
    const result = await this.deps.storage.owners.list({
      page: q.page,
      perPage: q.per_page,
      search: q.search,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  async update(actor: Actor, id: string, input: OwnerUpdate): Promise<Owner> {
    const data = parseInput(ownerUpdateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.owners.get(id))) throw notFound('owner', id);
      const owner = await tx.owners.update(id, data);
      await this.audit.record(actor, configEvent('owner_updated', 'owner', id, data), tx);
      return owner;
    });
  }

  /** 409 while certificates (or anything else) still name the owner. */
  async delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.owners.get(id))) throw notFound('owner', id);
      const refused = stillReferenced('owner', id, await tx.owners.references(id));
      if (refused) throw refused;
      await tx.owners.delete(id);
      await this.audit.record(actor, configEvent('owner_deleted', 'owner', id), tx);
    });
  }
}
