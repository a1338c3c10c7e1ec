import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { PAGE_SECURITY_HEADERS } from '../http/security-headers.js';
import type { OpenApiDocument } from '../openapi/document.js';
import { renderReferencePage } from '../openapi/reference-page.js';

export interface VersionInfo {
  version: string;
  commit: string;
  modified: boolean;
  build_time: string;
}

export type ReadinessCheck = () => Promise<Record<string, { ok: boolean; detail?: string }>>;

export interface SystemRouteOptions {
  authType: 'api-key' | 'none';
  version: Partial<VersionInfo>;
  readiness: ReadinessCheck | undefined;
  metrics: (() => Promise<{ contentType: string; body: string }>) | undefined;
  openapi: () => OpenApiDocument;
}

const checksSchema = z.record(z.string(), z.object({ ok: z.boolean(), detail: z.string().optional() }));
const readySchema = z.object({ status: z.enum(['ready', 'not_ready']), checks: checksSchema });

export const versionSchema = z.object({
  version: z.string(),
  commit: z.string(),
  modified: z.boolean(),
  build_time: z.string(),
  go_version: z.string().describe('runtime version string; the field name is kept for compatibility'),
  runtime: z.string(),
});

/** Health, readiness, auth info, version, OpenAPI and metrics. */
export function systemRoutes(options: SystemRouteOptions): RouteSpec[] {
  const version: z.infer<typeof versionSchema> = {
    version: options.version.version ?? '3.0.0',
    commit: options.version.commit ?? 'unknown',
    modified: options.version.modified ?? false,
    build_time: options.version.build_time ?? 'unknown',
    go_version: process.version,
    runtime: `node ${process.version}`,
  };
  const routes: RouteSpec[] = [
    defineRoute({
      method: 'GET',
      path: '/health',
      operationId: 'getHealth',
      permission: null,
      summary: 'Liveness: the process answers requests',
      tags: ['system'],
      public: { why: 'liveness probe', rateLimit: 'public' },
      responses: { 200: { description: 'alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/ready',
      operationId: 'getReady',
      permission: null,
      summary: 'Readiness: every dependency (storage, Redis) answers',
      tags: ['system'],
      public: { why: 'readiness probe', rateLimit: 'public' },
      responses: {
        200: { description: 'ready', schema: readySchema },
        503: { description: 'a dependency is not ready', schema: readySchema },
      },
      handle: async () => {
        const checks = options.readiness ? await options.readiness() : {};
        const ready = Object.values(checks).every((c) => c.ok);
        return {
          status: ready ? 200 : 503,
          body: { status: ready ? 'ready' : 'not_ready', checks },
          headers: { 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/auth/info',
      operationId: 'getAuthInfo',
      permission: null,
      summary: 'Which authentication the API expects',
      tags: ['auth'],
      public: { why: 'clients discover the auth type before they hold a key', rateLimit: 'public' },
      responses: {
        200: { description: 'auth type', schema: z.object({ auth_type: z.enum(['api-key', 'none']) }) },
      },
      handle: async () => ({ status: 200, body: { auth_type: options.authType } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/version',
      operationId: 'getVersion',
      permission: null,
      summary: 'The running build; GET only (HEAD and every other method: 405)',
      tags: ['system'],
      public: { why: 'build information', rateLimit: 'public' },
      head: false,
      responses: { 200: { description: 'build information', schema: versionSchema } },
      handle: async () => ({ status: 200, body: version }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/openapi.json',
      operationId: 'getOpenApi',
      permission: 'system.read',
      summary: 'This OpenAPI 3.1 document',
      tags: ['system'],
      responses: { 200: { description: 'OpenAPI document', contentType: 'application/json' } },
      handle: async () => ({ status: 200, body: options.openapi() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/docs/api',
      operationId: 'getApiReference',
      permission: null,
      summary: 'Human-readable API reference',
      tags: ['system'],
      public: { why: 'describes the routes and holds no data', rateLimit: 'public' },
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handle: async () =>
        new Response(renderReferencePage(options.openapi()), {
          status: 200,
          headers: { ...PAGE_SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' },
        }),
    }),
  ];
  const metrics = options.metrics;
  if (metrics) {
    routes.push(
      defineRoute({
        method: 'GET',
        path: '/metrics',
        operationId: 'getMetrics',
        permission: 'system.metrics',
        summary: 'Prometheus metrics',
        tags: ['system'],
        responses: { 200: { description: 'Prometheus text exposition', contentType: 'text/plain' } },
        handle: async () => {
          const { contentType, body } = await metrics();
          return new Response(body, { status: 200, headers: { 'content-type': contentType } });
        },
      }),
    );
  }
  return routes;
}
