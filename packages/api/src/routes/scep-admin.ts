import type { Services } from '@certwright/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { ProtocolServers } from '../protocols/servers.js';
import { profilesBody, profilesEnvelope } from './admin-profiles.js';
import { mdmSnapshotSchema } from './scep-mdm-admin.js';

const TAG = 'SCEP administration';

const profileSnapshot = z.object({
  profile_id: z.string(),
  name: z.string(),
  path_id: z.string().nullable(),
  enabled: z.boolean(),
  ra_subject: z
    .string()
    .nullable()
    .describe('subject of the RA certificate; null until the first SCEP request'),
  ra_not_before: z.string().nullable(),
  ra_not_after: z.string().nullable(),
  mtls_enabled: z.boolean().describe('whether the /scep-mtls routes accept clients (a trust bundle is set)'),
  mtls_trust_bundle_path: z.string().nullable(),
  challenge_password_set: z
    .boolean()
    .describe('whether a static challenge password is configured (never the password)'),
  mdm: mdmSnapshotSchema
    .optional()
    .describe(
      'device-management challenges: present only when scep.mdm.enabled (docs/protocols/scep-mdm.md)',
    ),
});

/** SCEP profile snapshots, admin only (docs/protocols/scep.md). */
export function scepAdminRoutes(services: Services, { scep }: ProtocolServers): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/admin/scep/profiles',
      operationId: 'scepAdminProfiles',
      permission: 'admin.scep.read',
      summary:
        'Per-profile SCEP snapshot: path id, RA certificate, mutual TLS, whether a challenge password is set',
      tags: [TAG],
      responses: {
        200: {
          description: 'every SCEP profile (and the default profile)',
          schema: profilesEnvelope(profileSnapshot),
        },
      },
      handle: async () => {
        const profiles = await Promise.all(
          (await scep.scep.profileSnapshots()).map(async (snapshot) => {
            const profile = await services.deps.storage.profiles.get(snapshot.profile_id);
            const mdm = profile ? await scep.mdm.snapshot(profile) : undefined;
            return mdm ? { ...snapshot, mdm } : snapshot;
          }),
        );
        return {
          status: 200,
          body: profilesBody(profiles, services.deps.clock.now()),
        };
      },
    }),
  ];
}
