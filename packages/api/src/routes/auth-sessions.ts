import { CertwrightError, pageQuerySchema, type Services, type Session } from '@certwright/core';
import { z } from 'zod';
import { actorOf, holds, tenantOf } from '../auth/principal.js';
import { clearedSessionCookies, sessionTokenOf } from '../auth/session-cookie.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams, pageOf, timestamp } from './crud.js';

const TAG = 'auth';

export const sessionJson = z.object({
  id: z.string(),
  user_id: z.string(),
  auth_method: z.enum(['oidc', 'breakglass', 'bootstrap']),
  ip_address: z.string().nullable(),
  user_agent: z.string().nullable(),
  created_at: timestamp,
  last_seen_at: timestamp,
  expires_at: timestamp.describe('absolute end, fixed at sign-in'),
  idle_expires_at: timestamp.describe('ends earlier when unused until then'),
  current: z.boolean().describe('the session making this request'),
});

const listQuery = pageQuerySchema.extend({
  all: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .describe("every user's sessions of the tenant (needs auth.session.list.all)"),
});

/** Sessions of the caller (or, with `auth.session.list.all`, of everyone in the tenant) and logout. */
export function authSessionRoutes(services: Services): RouteSpec[] {
  const sessions = services.sessions;
  const view = (currentId: string | undefined) => (s: Session) => ({
    id: s.id,
    user_id: s.user_id,
    auth_method: s.auth_method,
    ip_address: s.ip_address,
    user_agent: s.user_agent,
    created_at: s.created_at,
    last_seen_at: s.last_seen_at,
    expires_at: s.expires_at,
    idle_expires_at: s.idle_expires_at,
    current: s.id === currentId,
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/sessions',
      operationId: 'listAuthSessions',
      permission: 'auth.session.list',
      summary: "Your sessions; with all=true every user's (auth.session.list.all)",
      tags: [TAG],
      query: listQuery,
      responses: {
        200: { description: 'one page of sessions, newest first', schema: envelope(sessionJson) },
        403: { description: 'all=true without auth.session.list.all' },
      },
      handle: async ({ query, principal }) => {
        const { all, ...page } = query;
        const own = principal?.kind === 'session' ? principal.id : undefined;
        if ((all || own === undefined) && !holds(principal, 'auth.session.list.all')) {
          throw new CertwrightError(
            'forbidden',
            "listing every user's sessions requires auth.session.list.all",
          );
        }
        const result = await sessions.list(tenantOf(principal), all ? undefined : own, page);
        return { status: 200, body: pageOf(result, view(principal?.sessionId)) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/auth/sessions',
      operationId: 'revokeOtherAuthSessions',
      permission: 'auth.session.revoke',
      summary: 'End every session of yours except the current one',
      tags: [TAG],
      responses: {
        200: { description: 'how many ended', schema: z.object({ revoked: z.number().int().min(0) }) },
        409: { description: 'the caller is not a signed-in user' },
      },
      handle: async ({ principal }) => {
        if (principal?.kind !== 'session') {
          throw new CertwrightError('conflict', 'only a signed-in user has sessions of their own to revoke');
        }
        const revoked = await sessions.revokeOthers(actorOf(principal), principal.id, principal.sessionId);
        return { status: 200, body: { revoked } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/auth/sessions/{id}',
      operationId: 'revokeAuthSession',
      permission: 'auth.session.revoke',
      summary: "End one session: yours, or anyone's in the tenant with auth.session.list.all",
      tags: [TAG],
      params: idParams,
      responses: {
        204: { description: 'ended' },
        404: { description: 'no such session that you may end' },
      },
      handle: async ({ params, principal }) => {
        const owner =
          holds(principal, 'auth.session.list.all') || principal?.kind !== 'session'
            ? undefined
            : principal.id;
        await sessions.revoke(actorOf(principal), tenantOf(principal), params.id, owner);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/logout',
      operationId: 'logout',
      permission: null,
      public: {
        why: 'a browser ends its own session; the session cookie is checked in the handler',
        rateLimit: 'public',
      },
      summary: 'End the session of the cookie and clear the cookies',
      tags: [TAG],
      responses: { 204: { description: 'signed out (also when there was no session)' } },
      handle: async ({ request }) => {
        const token = sessionTokenOf(request);
        if (token !== null) await sessions.logout(token);
        const headers = new Headers({ 'cache-control': 'no-store' });
        for (const cookie of clearedSessionCookies()) headers.append('set-cookie', cookie);
        return new Response(null, { status: 204, headers });
      },
    }),
  ];
}
