import { isCertwrightError, publicMessage, type Services } from '@certwright/core';
import { EST_COUNTERS } from '@certwright/protocols/est';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { problem } from '../http/problem.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { ProtocolServers } from '../protocols/servers.js';
import { profilesBody, profilesEnvelope } from './admin-profiles.js';

const TAG = 'EST administration';

const profileStats = z.object({
  profile_id: z.string(),
  name: z.string(),
  path_id: z.string().nullable(),
  enabled: z.boolean(),
  server_keygen: z.boolean(),
  mtls_trust_bundle_path: z.string().nullable(),
  trust_anchors_loaded_at: z
    .string()
    .nullable()
    .describe('when the anchors in force were read; null: none loaded'),
  counters: z
    .object(
      Object.fromEntries(EST_COUNTERS.map((name) => [name, z.number().int()])) as Record<string, z.ZodNumber>,
    )
    .describe('events since the profile exists, counted from the audit trail (docs/protocols/est.md)'),
});

const reloadBody = z
  .object({
    path_id: z
      .string()
      .max(64)
      .nullable()
      .optional()
      .describe(
        'one profile by its EST path id; null: the default profile; absent: every EST profile with a bundle',
      ),
  })
  .strict()
  .optional();

/** EST statistics and trust reload, admin only. */
export function estAdminRoutes(services: Services, { est }: ProtocolServers): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/admin/est/profiles',
      operationId: 'estAdminProfiles',
      permission: 'admin.est.read',
      summary: 'Per-profile EST statistics: twelve named counters',
      tags: [TAG],
      responses: {
        200: {
          description: 'every EST profile (and the default profile) with its counters',
          schema: profilesEnvelope(profileStats),
        },
      },
      handle: async () => {
        const profiles = await est.stats();
        return {
          status: 200,
          body: profilesBody(profiles, services.deps.clock.now()),
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/admin/est/reload-trust',
      operationId: 'estAdminReloadTrust',
      permission: 'admin.est.reload',
      summary: 'Re-read EST mutual-TLS trust bundles; a bad file keeps the previous anchors',
      tags: [TAG],
      body: reloadBody,
      responses: {
        200: {
          description: 'the bundles reloaded',
          schema: z.object({
            reloaded: z.array(
              z.object({ profile_id: z.string(), path: z.string(), anchors: z.number().int() }),
            ),
          }),
        },
        404: { description: 'no EST profile with that path id' },
        409: { description: 'the profile names no trust bundle' },
        500: { description: 'the trust file is unreadable or invalid; the previous anchors stay in force' },
      },
      handle: async ({ body, principal, requestId }) => {
        try {
          const reloaded = await est.reloadTrust(
            actorOf(principal),
            body === undefined || !('path_id' in body) ? undefined : (body.path_id ?? null),
          );
          return { status: 200, body: { reloaded } };
        } catch (error) {
          // An unreadable or invalid trust file is 500, and the operator needs to know why.
          if (!isCertwrightError(error) || error.extra.est_failure !== 'trust_reload') throw error;
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
