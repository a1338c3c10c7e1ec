import type { Services } from '@certwright/core';
import { z } from 'zod';
import type { OidcSettings } from '../auth/oidc.js';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';

/** What the runtime-config route reports beyond the services' own settings. */
export interface RuntimeAuthFacts {
  authType: 'api-key' | 'none';
  oidc: OidcSettings;
  trustedProxies: readonly string[];
  demo: { seeded: boolean; modeAcknowledged: boolean };
}

const runtimeJson = z.object({
  auth_type: z.enum(['api-key', 'none']),
  sessions: z.object({
    idle_timeout_seconds: z.number(),
    absolute_timeout_seconds: z.number(),
    bind_user_agent: z.boolean(),
  }),
  oidc: z.object({
    prelogin_require_ua: z.boolean(),
    prelogin_require_ip: z.boolean(),
    bcl_max_age_seconds: z.number(),
    providers: z.number().int().describe("enabled providers of the caller's tenant"),
  }),
  breakglass: z.object({
    enabled: z.boolean(),
    lockout_threshold: z.number().int(),
    lockout_duration_seconds: z.number(),
  }),
  trusted_proxies: z.array(z.string()),
  demo: z.object({ seeded: z.boolean(), mode_acknowledged: z.boolean() }),
});

/** `GET /api/v1/auth/runtime-config`: the auth settings in force, read-only, no secrets. */
export function authRuntimeRoutes(services: Services, facts: RuntimeAuthFacts): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/runtime-config',
      operationId: 'getAuthRuntimeConfig',
      permission: 'auth.role.assign',
      summary: 'The authentication settings in force (read-only; secrets are never included)',
      tags: ['auth'],
      responses: { 200: { description: 'the settings', schema: runtimeJson } },
      handle: async ({ principal }) => {
        const tenant = principal?.tenantId ?? 'default';
        const providers = (await services.people.listProviders(tenant)).filter((p) => p.enabled).length;
        const sessions = services.sessions.settings;
        const breakglass = services.breakglass.settings;
        return {
          status: 200,
          body: {
            auth_type: facts.authType,
            sessions: {
              idle_timeout_seconds: sessions.idleTimeoutMs / 1000,
              absolute_timeout_seconds: sessions.absoluteTimeoutMs / 1000,
              bind_user_agent: sessions.bindUserAgent,
            },
            oidc: {
              prelogin_require_ua: facts.oidc.preloginRequireUa,
              prelogin_require_ip: facts.oidc.preloginRequireIp,
              bcl_max_age_seconds: facts.oidc.bclMaxAgeSeconds,
              providers,
            },
            breakglass: {
              enabled: breakglass.enabled,
              lockout_threshold: breakglass.lockoutThreshold,
              lockout_duration_seconds: breakglass.lockoutMs / 1000,
            },
            trusted_proxies: [...facts.trustedProxies],
            demo: { seeded: facts.demo.seeded, mode_acknowledged: facts.demo.modeAcknowledged },
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/auth/demo-residual/cleanup',
      operationId: 'cleanupDemoResidue',
      permission: 'auth.role.assign',
      summary: 'Remove the users a demo seeded (with their sessions and credentials); 503 while in demo mode',
      tags: ['auth'],
      responses: {
        200: {
          description: 'how many demo users were removed',
          schema: z.object({ removed: z.number().int().min(0) }),
        },
        503: { description: 'demo mode is on' },
      },
      handle: async ({ principal }) => ({
        status: 200,
        body: { removed: await services.people.cleanupDemoResidue(actorOf(principal), facts.demo.seeded) },
      }),
    }),
  ];
}
