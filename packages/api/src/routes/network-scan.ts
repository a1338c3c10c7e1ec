import { type Services, scepProbeHistorySchema, scepProbeInputSchema } from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { timestamp } from './crud.js';

const TAG = 'network scan';

const scepProbeJson = z.object({
  id: z.string(),
  url: z.string(),
  reachable: z.boolean().describe('the server sent an HTTP answer (any status)'),
  capabilities: z.array(z.string()).describe('GetCACaps keywords as the server sent them'),
  supports_rfc8894: z.boolean().describe('SCEPStandard advertised'),
  supports_aes: z.boolean().describe('AES, or SCEPStandard which implies it'),
  supports_post: z.boolean().describe('POSTPKIOperation, or SCEPStandard which implies it'),
  supports_renewal: z.boolean().describe('Renewal'),
  supports_sha256: z.boolean().describe('SHA-256, or SCEPStandard which implies it'),
  supports_sha512: z.boolean().describe('SHA-512'),
  ca_subject: z.string().nullable(),
  ca_issuer: z.string().nullable(),
  ca_not_before: timestamp.nullable(),
  ca_not_after: timestamp.nullable(),
  days_to_expiry: z
    .number()
    .int()
    .nullable()
    .describe('whole days from this answer until ca_not_after, negative once expired'),
  key_algorithm: z.string().nullable().describe('e.g. "RSA 2048", "ECDSA P-256", "Ed25519", "DSA 2048"'),
  chain_length: z.number().int().describe('certificates in the GetCACert answer'),
  expired: z.boolean().nullable().describe('ca_not_after lies before this answer'),
  probed_at: timestamp,
  duration_ms: z.number().int(),
  error: z.string().nullable().describe('null when both requests succeeded and the CA certificate was read'),
});

/** SCEP probes (docs/protocols/scep-probe.md). */
export function networkScanRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/network-scan/scep-probe',
      operationId: 'probeScepServer',
      permission: 'scan.probe',
      summary: 'Probe a SCEP server: GetCACaps and GetCACert through the outbound address guard',
      tags: [TAG],
      body: scepProbeInputSchema.strict(),
      responses: {
        200: {
          description:
            'the stored probe result; a refused destination or a failing server is reported in `error`, still 200',
          schema: scepProbeJson,
        },
      },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await services.scepProbes.probe(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/network-scan/scep-probes',
      operationId: 'listScepProbes',
      permission: 'scan.read',
      summary: 'Recent SCEP probe results, newest first',
      tags: [TAG],
      query: scepProbeHistorySchema,
      responses: {
        200: {
          description: 'the newest results; expiry fields computed at the time of this answer',
          schema: z.object({
            data: z.array(scepProbeJson),
            limit: z.number().int().describe('the limit applied after clamping'),
          }),
        },
      },
      handle: async ({ query }) => ({
        status: 200,
        body: { data: await services.scepProbes.recent(query), limit: query.limit },
      }),
    }),
  ];
}
