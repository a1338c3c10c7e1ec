import { bulkReassignSchema, bulkRenewSchema, bulkRevokeSchema, type Services } from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';

const bulkError = z.object({
  certificate_id: z.string(),
  error: z.string().describe('stable code, e.g. not_found'),
  message: z.string(),
});

const revokeResult = z.object({
  total_matched: z.number().int(),
  total_revoked: z.number().int(),
  total_skipped: z.number().int().describe('already revoked'),
  total_failed: z.number().int(),
  errors: z.array(bulkError),
});
const renewResult = z.object({
  total_matched: z.number().int(),
  total_renewed: z.number().int(),
  total_skipped: z.number().int().describe('Archived, Revoked, Expired or RenewalInProgress'),
  total_failed: z.number().int(),
  errors: z.array(bulkError),
  enqueued_jobs: z.array(z.object({ certificate_id: z.string(), job_id: z.string() })),
});
const reassignResult = z.object({
  total_requested: z.number().int(),
  total_reassigned: z.number().int(),
  total_failed: z.number().int(),
  errors: z.array(bulkError),
});

const TAG = 'bulk';
const invalid = {
  400: { description: 'empty criteria, source alone ("too broad"), invalid reason or reference' },
};

/**
 * Bulk operations. Registered before `/certificates/{id}`. Both bulk
 * revocations need `cert.revoke`; bulk renew and reassign need only `cert.write`.
 */
export function bulkRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/certificates/bulk-revoke',
      operationId: 'bulkRevokeCertificates',
      permission: 'cert.revoke',
      summary: 'Revoke every certificate the criteria select (criteria combine with AND)',
      tags: [TAG],
      body: bulkRevokeSchema,
      responses: { 200: { description: 'bulk result', schema: revokeResult }, ...invalid },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await services.bulk.revoke(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/certificates/bulk-renew',
      operationId: 'bulkRenewCertificates',
      permission: 'cert.write',
      summary:
        'Start renewal of every selected certificate not Archived, Revoked, Expired or RenewalInProgress',
      tags: [TAG],
      body: bulkRenewSchema,
      responses: { 200: { description: 'result with enqueued_jobs', schema: renewResult }, ...invalid },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await services.bulk.renew(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/certificates/bulk-reassign',
      operationId: 'bulkReassignCertificates',
      permission: 'cert.write',
      summary: 'Move listed certificates to another owner (and team)',
      tags: [TAG],
      body: bulkReassignSchema,
      responses: { 200: { description: 'result', schema: reassignResult }, ...invalid },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await services.bulk.reassign(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/est/certificates/bulk-revoke',
      operationId: 'estBulkRevokeCertificates',
      permission: 'cert.revoke',
      summary: 'Bulk revoke restricted to EST-enrolled certificates (source forced to EST)',
      tags: [TAG],
      body: bulkRevokeSchema,
      responses: { 200: { description: 'bulk result', schema: revokeResult }, ...invalid },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await services.bulk.revoke(actorOf(principal), body, { est: true }),
      }),
    }),
  ];
}
