import type { NamedKind, NameRepository } from '@certwright/core';
import { sql } from 'kysely';
import type { Ctx } from '../context.js';

/** The table holding each kind's records; all but users keep the name in a `name` column. */
const TABLES = {
  certificate: 'certificates',
  issuer: 'issuers',
  owner: 'owners',
  team: 'teams',
  profile: 'certificate_profiles',
  renewal_policy: 'renewal_policies',
  policy_rule: 'policy_rules',
  agent: 'agents',
  target: 'deployment_targets',
  webhook: 'webhooks',
  scan_target: 'scan_targets',
  health_check: 'health_checks',
} as const satisfies Record<Exclude<NamedKind, 'user'>, string>;

export function nameRepository(ctx: Ctx): NameRepository {
  return {
    async namesOf(kind, ids, tenantId) {
      const out = new Map<string, string>();
      const wanted = [...new Set(ids)];
      if (wanted.length === 0) return out;
      const rows =
        kind === 'user'
          ? await ctx.db
              .selectFrom('auth_users')
              .select([
                'id',
                sql<string>`coalesce(${sql.ref('display_name')}, ${sql.ref('email')}, ${sql.ref('subject')})`.as(
                  'name',
                ),
              ])
              .where('tenant_id', '=', tenantId)
              .where('id', 'in', wanted)
              .execute()
          : // Every table of TABLES has `id` and `name`: typed as one of them, since only those are read.
            await ctx.db
              .selectFrom(TABLES[kind] as 'owners')
              .select(['id', 'name'])
              .where('id', 'in', wanted)
              .execute();
      for (const row of rows) out.set(row.id, row.name);
      return out;
    },
  };
}
