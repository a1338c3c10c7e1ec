import {
  type AuthUser,
  PERMISSION_NAMES,
  pageQuerySchema,
  type Services,
  userCreateSchema,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf, type Principal, tenantOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams, pageOf, timestamp } from './crud.js';

const TAG = 'auth';

export const userJson = z.object({
  id: z.string(),
  tenant_id: z.string(),
  subject: z.string().describe("the identity provider's `sub`, or the local actor id"),
  provider_id: z.string().nullable().describe('the OIDC provider; null for a local user'),
  email: z.string().nullable(),
  display_name: z.string().nullable(),
  created_at: timestamp,
  last_login_at: timestamp.nullable(),
  deactivated_at: timestamp.nullable().describe('set while deactivated: no session of theirs works'),
});

const userView = (u: AuthUser) => ({
  id: u.id,
  tenant_id: u.tenant_id,
  subject: u.subject,
  provider_id: u.provider_id,
  email: u.email,
  display_name: u.display_name,
  created_at: u.created_at,
  last_login_at: u.last_login_at,
  deactivated_at: u.deactivated_at,
});

const permissionName = z.enum(PERMISSION_NAMES as [string, ...string[]]);
const roleJson = z.object({
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.string()),
  built_in: z.boolean().describe('built-in roles cannot be changed or removed'),
});
const roleName = z.object({ name: z.string().min(1).max(64) });
const roleCreate = z.strictObject({
  name: z.string().min(1).max(64),
  description: z.string().max(1024).optional(),
  permissions: z.array(permissionName).max(PERMISSION_NAMES.length),
});
const roleUpdate = z.strictObject({
  description: z.string().max(1024).optional(),
  permissions: z.array(permissionName).max(PERMISSION_NAMES.length).optional(),
});
const userRoles = z.strictObject({ roles: z.array(z.string().min(1).max(64)).max(64) });
const userRolesJson = z.object({ user_id: z.string(), roles: z.array(z.string()) });

/** The caller's own user, when the caller is a signed-in user. */
const selfOf = (principal: Principal | null) => (principal?.kind === 'session' ? principal.id : undefined);

/** Users of the caller's tenant, their roles, and the tenant's custom roles. */
export function authPeopleRoutes(services: Services): RouteSpec[] {
  const people = services.people;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/users',
      operationId: 'listAuthUsers',
      permission: 'auth.user.read',
      summary: "List the users of the caller's tenant, oldest first",
      tags: [TAG],
      query: pageQuerySchema,
      responses: { 200: { description: 'one page of users', schema: envelope(userJson) } },
      handle: async ({ query, principal }) => ({
        status: 200,
        body: pageOf(await people.listUsers(tenantOf(principal), query), userView),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/auth/users',
      operationId: 'createAuthUser',
      // Making a user is granting access: the permission that assigns roles.
      permission: 'auth.role.assign',
      summary:
        "Create a user of the caller's tenant with roles: an OIDC user before their first sign-in, or a local one",
      tags: [TAG],
      body: userCreateSchema,
      responses: {
        201: { description: 'the user created', schema: userJson },
        400: { description: 'a bad field, an unknown role or provider; `errors` names the field' },
        409: { description: 'the subject is taken at that provider' },
      },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: userView(await people.createUser(actorOf(principal), tenantOf(principal), body)),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/auth/users/{id}',
      operationId: 'deactivateAuthUser',
      permission: 'auth.user.deactivate',
      summary: 'Deactivate a user; their sessions end at once. Your own user is 409',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the user, deactivated', schema: userJson },
        404: { description: 'no such user in your tenant' },
        409: { description: 'your own user' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: userView(
          await people.deactivate(actorOf(principal), tenantOf(principal), params.id, selfOf(principal)),
        ),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/auth/users/{id}/reactivate',
      operationId: 'reactivateAuthUser',
      permission: 'auth.user.deactivate',
      summary: 'Reactivate a deactivated user',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the user, active', schema: userJson },
        404: { description: 'no such user in your tenant' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: userView(await people.reactivate(actorOf(principal), tenantOf(principal), params.id)),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/users/{id}/roles',
      operationId: 'getAuthUserRoles',
      permission: 'auth.user.read',
      summary: "A user's directly assigned roles (group-mapped roles come from the sign-in)",
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the roles', schema: userRolesJson },
        404: { description: 'no such user in your tenant' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: { user_id: params.id, roles: await people.rolesOfUser(tenantOf(principal), params.id) },
      }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/v1/auth/users/{id}/roles',
      operationId: 'setAuthUserRoles',
      permission: 'auth.role.assign',
      summary: "Replace a user's directly assigned roles",
      tags: [TAG],
      params: idParams,
      body: userRoles,
      responses: {
        200: { description: 'the roles now', schema: userRolesJson },
        404: { description: 'no such user in your tenant' },
      },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: {
          user_id: params.id,
          roles: await people.setUserRoles(actorOf(principal), tenantOf(principal), params.id, body.roles),
        },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/roles',
      operationId: 'listAuthRoles',
      permission: 'auth.user.read',
      summary: "The built-in roles and the tenant's own",
      tags: [TAG],
      responses: { 200: { description: 'every role', schema: z.object({ data: z.array(roleJson) }) } },
      handle: async ({ principal }) => ({
        status: 200,
        body: { data: await people.listRoles(tenantOf(principal)) },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/auth/roles',
      operationId: 'createAuthRole',
      permission: 'auth.role.assign',
      summary: 'Define a custom role',
      tags: [TAG],
      body: roleCreate,
      responses: {
        201: { description: 'the role', schema: roleJson },
        409: { description: 'the name is taken or built in' },
      },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await people.createRole(actorOf(principal), tenantOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/v1/auth/roles/{name}',
      operationId: 'updateAuthRole',
      permission: 'auth.role.assign',
      summary: 'Change a custom role; omitted fields keep their values',
      tags: [TAG],
      params: roleName,
      body: roleUpdate,
      responses: {
        200: { description: 'the role', schema: roleJson },
        404: { description: 'no such custom role' },
        409: { description: 'a built-in role' },
      },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await people.updateRole(actorOf(principal), tenantOf(principal), params.name, body),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/auth/roles/{name}',
      operationId: 'deleteAuthRole',
      permission: 'auth.role.assign',
      summary: 'Remove a custom role, its assignments and its group mappings',
      tags: [TAG],
      params: roleName,
      responses: {
        204: { description: 'removed' },
        404: { description: 'no such custom role' },
        409: { description: 'a built-in role' },
      },
      handle: async ({ params, principal }) => {
        await people.deleteRole(actorOf(principal), tenantOf(principal), params.name);
        return { status: 204 };
      },
    }),
  ];
}
