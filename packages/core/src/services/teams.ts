import { z } from 'zod';
import type { Team } from '../domain/team.js';
import { notFound } from '../errors.js';
import { type AuditService, configEvent } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { nameTaken, type Paged, parseInput, stillReferenced } from './input.js';
import { pageQuerySchema } from './paging.js';

export const teamCreateSchema = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(2000).nullable().optional(),
});
export const teamUpdateSchema = teamCreateSchema.partial();
export const teamListSchema = pageQuerySchema.extend({
  search: z.string().max(255).optional().describe('case-insensitive substring of the name'),
});
export type TeamCreate = z.input<typeof teamCreateSchema>;
export type TeamUpdate = z.input<typeof teamUpdateSchema>;
export type TeamListQuery = z.input<typeof teamListSchema>;

/** Teams group certificates for ownership and reporting; names are unique. */
export class TeamService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  async create(actor: Actor, input: TeamCreate): Promise<Team> {
    const data = parseInput(teamCreateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      const team = await tx.teams
        .create({ name: data.name, description: data.description ?? null })
        .catch(nameTaken(data.name));
      await this.audit.record(actor, configEvent('team_created', 'team', team.id, data), tx);
      return team;
    });
  }

  async get(id: string): Promise<Team> {
    const team = await this.deps.storage.teams.get(id);
    if (!team) throw notFound('team', id);
    return team;
  }

  async list(query: TeamListQuery = {}): Promise<Paged<Team>> {
    const q = parseInput(teamListSchema, query);
    const result = await this.deps.storage.teams.list({
      page: q.page,
      perPage: q.per_page,
      search: q.search,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  async update(actor: Actor, id: string, input: TeamUpdate): Promise<Team> {
    const data = parseInput(teamUpdateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.teams.get(id))) throw notFound('team', id);
      const team = await tx.teams.update(id, data).catch(nameTaken(data.name));
      await this.audit.record(actor, configEvent('team_updated', 'team', id, data), tx);
      return team;
    });
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.teams.get(id))) throw notFound('team', id);
      const refused = stillReferenced('team', id, await tx.teams.references(id));
      if (refused) throw refused;
      await tx.teams.delete(id);
      await this.audit.record(actor, configEvent('team_deleted', 'team', id), tx);
    });
  }
}
