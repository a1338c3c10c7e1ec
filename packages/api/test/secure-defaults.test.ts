import type { TransportContext } from '@certwright/core';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createHandler, defineRoute, type HandlerOptions, type ProtocolMount } from '../src/index.js';

const SECRET = 'test-secret-0123456789abcdef';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };
const auth = { authorization: `Bearer ${SECRET}` };

const call = (handler: ReturnType<typeof createHandler>, path: string, init: RequestInit = {}) =>
  handler(new Request(`https://localhost:8443${path}`, init), transport);

function embedder(options: Partial<HandlerOptions> = {}) {
  const service = vi.fn(async (value: unknown) => value);
  const handler = createHandler({
    auth: { type: 'api-key', secret: SECRET },
    routes: [
      defineRoute({
        method: 'GET',
        path: '/internal/report',
        operationId: 'internalReport',
        permission: 'system.read',
        summary: 'an embedder route outside /api/',
        tags: ['embedder'],
        responses: { 200: { description: 'report', schema: z.object({ ok: z.boolean() }) } },
        handle: async () => ({ status: 200, body: { ok: Boolean(await service('report')) } }),
      }),
      defineRoute({
        method: 'GET',
        path: '/status-page',
        operationId: 'statusPage',
        permission: null,
        summary: 'an embedder route declared public',
        tags: ['embedder'],
        public: { why: 'shown on the public status page', rateLimit: 'public' },
        responses: { 200: { description: 'status', schema: z.object({ up: z.boolean() }) } },
        handle: async () => ({ status: 200, body: { up: true } }),
      }),
      defineRoute({
        method: 'POST',
        path: '/api/v1/widgets',
        operationId: 'createWidget',
        permission: 'system.read',
        summary: 'a JSON route',
        tags: ['embedder'],
        body: z.object({ name: z.string() }),
        responses: { 201: { description: 'created', schema: z.object({ name: z.string() }) } },
        handle: async ({ body }) => ({ status: 201, body: await service(body) }),
      }),
      defineRoute({
        method: 'POST',
        path: '/api/v1/widgets/{id}/polish',
        operationId: 'polishWidget',
        permission: 'system.read',
        summary: 'a JSON route whose body is optional',
        tags: ['embedder'],
        params: z.object({ id: z.string() }),
        body: z.object({ shine: z.number() }).optional(),
        responses: { 200: { description: 'polished', schema: z.object({ id: z.string() }) } },
        handle: async ({ params }) => ({ status: 200, body: { id: String(await service(params.id)) } }),
      }),
      defineRoute({
        method: 'POST',
        path: '/api/v1/widgets/{id}/archive',
        operationId: 'archiveWidget',
        permission: 'system.read',
        summary: 'a state-changing route without a body',
        tags: ['embedder'],
        params: z.object({ id: z.string() }),
        responses: { 204: { description: 'archived' } },
        handle: async ({ params }) => {
          await service(params.id);
          return { status: 204 };
        },
      }),
    ],
    ...options,
  });
  return { handler, service };
}

describe('every route is authenticated unless its own definition says public', () => {
  it("authenticates an embedder's route mounted outside /api/", async () => {
    const { handler, service } = embedder();
    const anonymous = await call(handler, '/internal/report');
    expect(anonymous.status).toBe(401);
    expect(service).not.toHaveBeenCalled();
    expect((await call(handler, '/internal/report', { headers: auth })).status).toBe(200);
  });

  it('serves a route declared public without a key and documents why', async () => {
    const { handler } = embedder();
    const res = await call(handler, '/status-page');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ up: true });
    const op = handler.openapi.paths['/status-page']?.get as Record<string, unknown>;
    expect(op.security).toEqual([]);
    expect(op['x-public']).toBe('shown on the public status page');
    expect(op['x-rate-limit']).toBe('public');
    const internal = handler.openapi.paths['/internal/report']?.get as Record<string, unknown>;
    expect(internal.security).toBeUndefined();
    expect(Object.keys(internal.responses as object)).toContain('401');
  });

  it('pre-approves no protocol prefix that has no mount', async () => {
    const { handler } = embedder();
    for (const path of ['/acme/new-nonce', '/scep', '/scep-mtls/x', '/.well-known/est-mtls/simpleenroll']) {
      expect((await call(handler, path, { method: 'POST' })).status, path).toBe(401);
    }
    // Without services there is no CRL or OCSP mount either.
    expect((await call(handler, '/.well-known/pki/crl/iss-1')).status).toBe(401);
  });

  it('keeps the system routes of the public table public, and nothing else', async () => {
    const { handler } = embedder();
    const publicRoutes = handler.routes.filter((r) => r.public).map((r) => `${r.method} ${r.path}`);
    expect(publicRoutes.sort()).toEqual(
      [
        'GET /health',
        'GET /ready',
        'GET /api/v1/auth/info',
        'GET /api/v1/version',
        'GET /docs/api',
        'GET /status-page',
      ].sort(),
    );
    for (const route of handler.routes.filter((r) => r.public)) {
      expect(route.public?.why.length, route.path).toBeGreaterThan(5);
    }
    expect((await call(handler, '/api/v1/openapi.json')).status).toBe(401);
  });
});

describe('protocol mounts', () => {
  const echo =
    (name: string): ProtocolMount['answer'] =>
    async (request) =>
      new Response(`${name} ${new URL(request.url).pathname}`, { headers: { 'content-type': 'text/plain' } });

  it('dispatch by prefix; a mount without a public declaration needs a key and its permission', async () => {
    const { handler } = embedder({
      protocols: [
        {
          prefix: '/scep',
          route: '/scep/{path}',
          answer: echo('scep'),
          public: { why: 'challenge password', rateLimit: 'enrollment' },
        },
        {
          prefix: '/scep-mtls',
          route: '/scep-mtls/{path}',
          answer: echo('scep-mtls'),
          permission: 'system.read',
        },
      ],
    });
    expect(await (await call(handler, '/scep')).text()).toBe('scep /scep');
    expect(await (await call(handler, '/scep/profile-a')).text()).toBe('scep /scep/profile-a');
    // `/scep-mtls` is its own mount, not a path under `/scep`.
    expect((await call(handler, '/scep-mtls')).status).toBe(401);
    expect(await (await call(handler, '/scep-mtls/x', { headers: auth })).text()).toBe(
      'scep-mtls /scep-mtls/x',
    );
    expect((await call(handler, '/scepx')).status).toBe(401);
  });

  it('refuses two mounts on one prefix and a prefix with a trailing slash', () => {
    const mount = { prefix: '/acme', route: '/acme', answer: echo('a'), permission: 'system.read' as const };
    expect(() => embedder({ protocols: [mount, mount] })).toThrow(/two protocol mounts claim '\/acme'/);
    expect(() => embedder({ protocols: [{ ...mount, prefix: '/acme/' }] })).toThrow(/must start with '\/'/);
  });
});

describe('state-changing JSON routes accept only application/json', () => {
  const post = (body: BodyInit | undefined, type: string | null, headers: Record<string, string> = auth) => ({
    method: 'POST',
    ...(body === undefined ? {} : { body }),
    headers: { ...headers, ...(type === null ? {} : { 'content-type': type }) },
  });

  it('answers 415 problem JSON to a form, text or typeless body, and runs nothing', async () => {
    const { handler, service } = embedder();
    const cases: [BodyInit, string | null][] = [
      ['name=x', 'application/x-www-form-urlencoded'],
      ['{"name":"x"}', 'text/plain'],
      ['{"name":"x"}', 'text/plain;charset=UTF-8'],
      ['{"name":"x"}', 'multipart/form-data; boundary=x'],
      ['{"name":"x"}', 'application/json; charset=iso-8859-1'],
      // A typeless Blob is what a cross-site fetch without preflight can send.
      [new Blob(['{"name":"x"}']), null],
    ];
    for (const [body, type] of cases) {
      const res = await call(handler, '/api/v1/widgets', post(body, type));
      expect(res.status, String(type)).toBe(415);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 415, error: 'unsupported_media_type' });
    }
    expect(service).not.toHaveBeenCalled();
  });

  it('accepts application/json with or without charset=utf-8', async () => {
    const { handler } = embedder();
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset="UTF-8"',
    ]) {
      expect((await call(handler, '/api/v1/widgets', post('{"name":"x"}', type))).status, type).toBe(201);
    }
  });

  it('refuses a form post to a bodyless state-changing route, but not a bare POST', async () => {
    const { handler, service } = embedder();
    const form = await call(
      handler,
      '/api/v1/widgets/w1/archive',
      post('', 'application/x-www-form-urlencoded'),
    );
    expect(form.status).toBe(415);
    expect(service).not.toHaveBeenCalled();
    expect((await call(handler, '/api/v1/widgets/w1/archive', post(undefined, null))).status).toBe(204);
    // An optional body may be omitted without a type.
    expect((await call(handler, '/api/v1/widgets/w1/polish', post(undefined, null))).status).toBe(200);
  });

  it('closes cross-site form posts with SVC_AUTH_TYPE=none too', async () => {
    const { handler, service } = embedder({ auth: { type: 'none' } });
    const res = await call(
      handler,
      '/api/v1/widgets',
      post('name=x', 'application/x-www-form-urlencoded', {}),
    );
    expect(res.status).toBe(415);
    expect(service).not.toHaveBeenCalled();
  });

  it('declares 415 for every state-changing route in the OpenAPI document', () => {
    const { handler } = embedder();
    for (const route of handler.routes.filter((r) => r.method !== 'GET')) {
      const op = handler.openapi.paths[route.path]?.[route.method.toLowerCase()] as { responses: object };
      expect(Object.keys(op.responses), route.operationId).toContain('415');
    }
  });
});
