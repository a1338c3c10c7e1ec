import type { Services, TransportContext } from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { sessionCookies } from '../auth/session-cookie.js';
import { problem } from '../http/problem.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { timestamp } from './crud.js';

const PATH = '/api/v1/auth/breakglass/credentials';
const TAG = 'auth';

const credentialJson = z.object({
  actor_id: z.string(),
  user_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  last_used_at: timestamp.nullable(),
  locked: z.boolean().describe('locked out after too many failed passwords'),
});
const actorParams = z.object({ actor_id: z.string().min(1).max(255) });
const setPassword = z.strictObject({
  actor_id: z.string().min(1).max(255),
  password: z.string().min(1).max(256).describe('write-only; stored as a scrypt hash'),
});
const login = z.strictObject({ actor_id: z.string().min(1).max(255), password: z.string().min(1).max(256) });

/** Break-glass credentials and their login (docs/auth/breakglass.md); 404 unless enabled. */
export function authBreakglassRoutes(
  services: Services,
  clientAddress: (request: Request, transport: TransportContext) => string,
): RouteSpec[] {
  const breakglass = services.breakglass;
  return [
    defineRoute({
      method: 'GET',
      path: PATH,
      operationId: 'listBreakglassCredentials',
      permission: 'auth.breakglass.admin',
      summary: 'Break-glass credentials (never their hashes)',
      tags: [TAG],
      responses: {
        200: { description: 'every credential', schema: z.object({ data: z.array(credentialJson) }) },
        404: { description: 'break-glass is disabled' },
      },
      handle: async () => ({ status: 200, body: { data: await breakglass.list() } }),
    }),
    defineRoute({
      method: 'POST',
      path: PATH,
      operationId: 'setBreakglassPassword',
      permission: 'auth.breakglass.admin',
      summary: "Set an actor's break-glass password; a new actor becomes a local user with the admin role",
      tags: [TAG],
      body: setPassword,
      responses: {
        200: {
          description: 'the credential',
          schema: z.object({ actor_id: z.string(), created_at: timestamp }),
        },
        404: { description: 'break-glass is disabled' },
      },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await breakglass.setPassword(actorOf(principal), body.actor_id, body.password),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: `${PATH}/{actor_id}`,
      operationId: 'deleteBreakglassCredential',
      permission: 'auth.breakglass.admin',
      summary: 'Remove a break-glass credential',
      tags: [TAG],
      params: actorParams,
      responses: { 204: { description: 'removed' }, 404: { description: 'unknown actor, or disabled' } },
      handle: async ({ params, principal }) => {
        await breakglass.remove(actorOf(principal), params.actor_id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${PATH}/{actor_id}/unlock`,
      operationId: 'unlockBreakglassCredential',
      permission: 'auth.breakglass.admin',
      summary: 'Lift a lockout after too many failed passwords',
      tags: [TAG],
      params: actorParams,
      responses: { 204: { description: 'unlocked' }, 404: { description: 'unknown actor, or disabled' } },
      handle: async ({ params, principal }) => {
        await breakglass.unlock(actorOf(principal), params.actor_id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/breakglass/login',
      operationId: 'breakglassLogin',
      permission: null,
      public: {
        why: 'operators sign in with a break-glass password while the identity provider is down',
        rateLimit: 'public',
      },
      summary: 'Sign in with a break-glass password: a session cookie, or a uniform 401',
      tags: [TAG],
      body: login,
      responses: {
        204: { description: 'signed in; the session cookies are set' },
        401: { description: 'unknown actor, wrong password or locked out — the same answer' },
        404: { description: 'break-glass is disabled' },
      },
      handle: async ({ body, request, transport, requestId }) => {
        const started = await breakglass.login(body.actor_id, body.password, {
          ip_address: clientAddress(request, transport),
          user_agent: request.headers.get('user-agent'),
        });
        if (!started) {
          return problem({
            status: 401,
            code: 'unauthorized',
            detail: 'invalid break-glass credentials',
            requestId,
          });
        }
        const headers = new Headers({ 'cache-control': 'no-store' });
        const maxAge = (started.session.expires_at.getTime() - started.session.created_at.getTime()) / 1000;
        for (const cookie of sessionCookies(started.token, maxAge)) headers.append('set-cookie', cookie);
        return new Response(null, { status: 204, headers });
      },
    }),
  ];
}
