import { DEFAULT_TENANT_ID, PERMISSION_NAMES, type Services } from '@certwright/core';
import { z } from 'zod';
import { tenantOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';

const TAG = 'auth';

const selfJson = z.object({
  kind: z.enum(['api-key', 'anonymous', 'agent', 'session']),
  id: z.string().describe('the user id of a session, otherwise the principal kind'),
  tenant_id: z.string(),
  session_id: z.string().nullable(),
  display_name: z.string().nullable().describe("the user's name or email, when a session is the caller"),
  permissions: z.array(z.string()).describe('every permission the caller holds, sorted'),
});

const signInJson = z.object({
  auth_type: z.enum(['api-key', 'none']),
  providers: z
    .array(z.object({ id: z.string(), name: z.string() }))
    .describe('enabled OIDC providers of the default tenant, by name'),
  breakglass: z.boolean().describe('whether break-glass sign-in is enabled'),
});

/**
 * Who the caller is and what it may do (the web console hides what it may not), and the public
 * list of ways to sign in (docs/auth/README.md, docs/web.md).
 */
export function authSelfRoutes(services: Services, authType: 'api-key' | 'none'): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/me',
      operationId: 'getAuthSelf',
      permission: 'auth.self.read',
      summary: 'The calling principal and every permission it holds',
      tags: [TAG],
      responses: { 200: { description: 'the caller', schema: selfJson } },
      handle: async ({ principal }) => {
        const granted = principal?.permissions;
        const permissions =
          granted === 'all' ? [...PERMISSION_NAMES] : granted instanceof Set ? [...granted] : [];
        let displayName: string | null = null;
        if (principal?.kind === 'session') {
          const user = await services.people.getUser(tenantOf(principal), principal.id).catch(() => null);
          displayName = user ? (user.display_name ?? user.email ?? user.subject) : null;
        }
        return {
          status: 200,
          body: {
            kind: principal?.kind ?? 'anonymous',
            id: principal?.id ?? 'anonymous',
            tenant_id: tenantOf(principal),
            session_id: principal?.sessionId ?? null,
            display_name: displayName,
            permissions: permissions.sort(),
          },
          headers: { 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/sign-in-options',
      operationId: 'getSignInOptions',
      permission: null,
      public: { why: 'the sign-in page lists the ways in before anyone is signed in', rateLimit: 'public' },
      summary: 'How a browser may sign in: enabled OIDC providers (id and name only) and break-glass',
      tags: [TAG],
      responses: { 200: { description: 'the ways to sign in', schema: signInJson } },
      handle: async () => {
        const providers = (await services.people.listProviders(DEFAULT_TENANT_ID))
          .filter((p) => p.enabled)
          .map((p) => ({ id: p.id, name: p.name }))
          .sort((a, b) => a.name.localeCompare(b.name));
        return {
          status: 200,
          body: { auth_type: authType, providers, breakglass: services.breakglass.settings.enabled },
          headers: { 'cache-control': 'no-store' },
        };
      },
    }),
  ];
}
