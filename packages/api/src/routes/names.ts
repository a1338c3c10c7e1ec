import { namesQuerySchema, type Services } from '@certwright/core';
import { z } from 'zod';
import { holds, tenantOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';

const namesJson = z.object({
  names: z
    .partialRecord(namesQuerySchema.keyof(), z.record(z.string(), z.string()))
    .describe('per kind asked for: id → name; an id of no record is absent'),
  withheld: z
    .array(z.string())
    .describe('kinds asked for whose read permission the caller lacks; they are not answered'),
});

/**
 * GET /api/v1/names: the names of related records, several kinds in one request, so a page of
 * a list shows names without reading each related record (docs/api/inventory.md#names).
 */
export function nameRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/names',
      operationId: 'resolveNames',
      // Every role holds it; each kind is answered only with that kind's read permission.
      permission: 'auth.self.read',
      summary: 'Names of records by id, per kind (each kind needs its read permission)',
      tags: ['names'],
      query: namesQuerySchema,
      responses: {
        200: { description: 'the names found', schema: namesJson },
        400: { description: 'an unknown kind, a bad id, or too many ids' },
      },
      handle: async ({ query, principal }) => ({
        status: 200,
        body: await services.names.resolve(
          query,
          (permission) => holds(principal, permission),
          tenantOf(principal),
        ),
      }),
    }),
  ];
}
