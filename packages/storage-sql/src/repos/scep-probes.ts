import { newId, type ScepProbe, type ScepProbeRepository } from '@certwright/core';
import type { Selectable } from 'kysely';
import { type Ctx, parseJson, toBool, toNum } from '../context.js';
import type { ScepProbesTable } from '../schema.js';

/** The history limit of the probe list (docs/protocols/scep-probe.md). */
const MAX_RECENT = 200;

function toProbe(r: Selectable<ScepProbesTable>): ScepProbe {
  return {
    id: r.id,
    url: r.url,
    reachable: toBool(r.reachable),
    capabilities: parseJson<string[]>(r.capabilities, []),
    supports_rfc8894: toBool(r.supports_rfc8894),
    supports_aes: toBool(r.supports_aes),
    supports_post: toBool(r.supports_post),
    supports_renewal: toBool(r.supports_renewal),
    supports_sha256: toBool(r.supports_sha256),
    supports_sha512: toBool(r.supports_sha512),
    ca_subject: r.ca_subject,
    ca_issuer: r.ca_issuer,
    ca_not_before: r.ca_not_before,
    ca_not_after: r.ca_not_after,
    key_algorithm: r.key_algorithm,
    chain_length: toNum(r.chain_length),
    probed_at: r.probed_at,
    duration_ms: toNum(r.duration_ms),
    error: r.error,
  };
}

export function scepProbeRepository(ctx: Ctx): ScepProbeRepository {
  return {
    async create(input) {
      const probe: ScepProbe = { ...input, id: input.id ?? newId('scepProbe') };
      await ctx.db
        .insertInto('scep_probes')
        .values({ ...probe, capabilities: JSON.stringify(probe.capabilities) })
        .execute();
      return probe;
    },
    async recent(limit) {
      const n = Number.isFinite(limit) ? Math.min(MAX_RECENT, Math.max(1, Math.floor(limit))) : MAX_RECENT;
      const rows = await ctx.db
        .selectFrom('scep_probes')
        .selectAll()
        .orderBy('probed_at', 'desc')
        .orderBy('id', 'desc')
        .limit(n)
        .execute();
      return rows.map(toProbe);
    },
  };
}
