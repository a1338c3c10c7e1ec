import type { OidcGroupMapping, Services } from '@certwright/core';
import { z } from 'zod';
import { actorOf, tenantOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { idParams, timestamp } from './crud.js';

const PATH = '/api/v1/auth/oidc/group-mappings';

const mappingJson = z.object({
  id: z.string(),
  tenant_id: z.string().describe("the caller's tenant; never taken from a request"),
  provider_id: z.string(),
  group: z.string(),
  role: z.string(),
  created_at: timestamp,
});
const mappingCreate = z.strictObject({
  provider_id: z.string().min(1).max(128),
  group: z.string().min(1).max(255).describe('a value of the provider’s groups claim'),
  role: z.string().min(1).max(64).describe('a built-in or custom role'),
});

const view = (m: OidcGroupMapping) => ({
  id: m.id,
  tenant_id: m.tenant_id,
  provider_id: m.provider_id,
  group: m.group,
  role: m.role,
  created_at: m.created_at,
});

/** OIDC group → role mappings of the caller's tenant. */
export function authGroupMappingRoutes(services: Services): RouteSpec[] {
  const people = services.people;
  return [
    defineRoute({
      method: 'GET',
      path: PATH,
      operationId: 'listOidcGroupMappings',
      permission: 'auth.oidc.list',
      summary: "The tenant's group → role mappings, oldest first",
      tags: ['auth'],
      responses: { 200: { description: 'every mapping', schema: z.object({ data: z.array(mappingJson) }) } },
      handle: async ({ principal }) => ({
        status: 200,
        body: { data: (await people.listGroupMappings(tenantOf(principal))).map(view) },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: PATH,
      operationId: 'createOidcGroupMapping',
      permission: 'auth.role.assign',
      summary: 'Map a group of a provider to a role in your tenant',
      tags: ['auth'],
      body: mappingCreate,
      responses: {
        201: { description: 'the mapping', schema: mappingJson },
        409: { description: 'the same mapping exists' },
      },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: view(await people.addGroupMapping(actorOf(principal), tenantOf(principal), body)),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: `${PATH}/{id}`,
      operationId: 'deleteOidcGroupMapping',
      permission: 'auth.role.assign',
      summary: 'Remove a group mapping',
      tags: ['auth'],
      params: idParams,
      responses: { 204: { description: 'removed' }, 404: { description: 'no such mapping in your tenant' } },
      handle: async ({ params, principal }) => {
        await people.removeGroupMapping(actorOf(principal), tenantOf(principal), params.id);
        return { status: 204 };
      },
    }),
  ];
}
