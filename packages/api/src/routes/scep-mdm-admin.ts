import { isCertwrightError, publicMessage, type Services } from '@certwright/core';
import { MDM_CHALLENGE_STATUSES } from '@certwright/protocols/scep';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { problem } from '../http/problem.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { ProtocolServers } from '../protocols/servers.js';
import { profilesBody, profilesEnvelope } from './admin-profiles.js';

const TAG = 'SCEP administration';

/** The eleven per-status counters, every label present (docs/protocols/scep-mdm.md). */
export const mdmCountersSchema = z
  .object(
    Object.fromEntries(MDM_CHALLENGE_STATUSES.map((s) => [s, z.number().int()])) as Record<
      (typeof MDM_CHALLENGE_STATUSES)[number],
      z.ZodNumber
    >,
  )
  .describe('challenges checked per outcome, shared by every instance on one ephemeral store');

const anchorSchema = z.object({
  subject: z.string(),
  not_after: z.string(),
  sha256: z.string().describe('the x5t#S256 a challenge names this certificate by'),
});

/** The `mdm` member of a SCEP profile snapshot (present only when the integration is enabled). */
export const mdmSnapshotSchema = z.object({
  counters: mdmCountersSchema,
  trust_anchor_subject: z.string().nullable().describe('the signing certificate that expires first'),
  trust_anchor_not_after: z.string().nullable(),
  trust_anchors: z.array(anchorSchema),
  trust_anchors_loaded_at: z.string().nullable().describe('when the anchors in force were read; null: none'),
  trust_bundle_path: z.string().nullable(),
  audience: z.string().describe('the audience a challenge must name'),
  max_lifetime_seconds: z.number().int(),
  require_compliance: z.boolean(),
});

const profileStats = z.object({
  profile_id: z.string(),
  name: z.string(),
  path_id: z.string().nullable(),
  scep_enabled: z.boolean(),
  counters: mdmCountersSchema,
});

const reloadBody = z
  .object({
    path_id: z
      .string()
      .max(64)
      .nullable()
      .optional()
      .describe('the profile by its SCEP path id; absent or null: the root profile'),
  })
  .strict()
  .optional();

/** Device-management challenge counters and trust reload of the SCEP server, admin only. */
export function scepMdmAdminRoutes(services: Services, { scep }: ProtocolServers): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/admin/scep/mdm/stats',
      operationId: 'scepMdmStats',
      permission: 'admin.scep.read',
      summary: 'Per-profile counters of device-management challenges, one per status label',
      tags: [TAG],
      responses: {
        200: {
          description: 'every profile with the device-management integration enabled',
          schema: profilesEnvelope(profileStats),
        },
      },
      handle: async () => {
        const profiles = await scep.mdm.stats();
        return {
          status: 200,
          body: profilesBody(profiles, services.deps.clock.now()),
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/admin/scep/mdm/reload-trust',
      operationId: 'scepMdmReloadTrust',
      permission: 'admin.scep.reload',
      summary: "Re-read a profile's MDM signing certificates; a bad file keeps the previous anchors",
      tags: [TAG],
      body: reloadBody,
      responses: {
        200: {
          description: 'the anchors now in force',
          schema: z.object({
            profile_id: z.string(),
            path: z.string(),
            anchors: z.array(anchorSchema),
          }),
        },
        404: { description: 'no SCEP profile with that path id' },
        409: {
          description: 'the device-management integration is not enabled on the profile (or names no file)',
        },
        500: { description: 'the trust file is unreadable or invalid; the previous anchors stay in force' },
      },
      handle: async ({ body, principal, requestId }) => {
        try {
          const reloaded = await scep.mdm.reloadTrust(actorOf(principal), body?.path_id ?? null);
          return { status: 200, body: reloaded };
        } catch (error) {
          // The operator must learn why the file was refused, and that nothing changed.
          if (!isCertwrightError(error) || error.extra.scep_mdm_failure !== 'trust_reload') throw error;
          return problem({
            status: 500,
            code: 'internal',
            reason: error.reason,
            detail: publicMessage(error),
            requestId,
          });
        }
      },
    }),
  ];
}
