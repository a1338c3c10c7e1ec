import { CertwrightError, type TransportContext } from '@certwright/core';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  createHandler,
  defineRoute,
  type HandlerOptions,
  type Principal,
  type RouteSpec,
} from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';

const SECRET = 'test-secret-0123456789abcdef';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };
const auth = { authorization: `Bearer ${SECRET}` };

function make(options: Partial<HandlerOptions> = {}) {
  return createHandler({ auth: { type: 'api-key', secret: SECRET }, ...options, ...conformance.options() });
}
const call = (handler: ReturnType<typeof make>, path: string, init: RequestInit = {}) =>
  conformance.call(handler, new Request(`https://localhost:8443${path}`, init), transport);

describe('system routes', () => {
  it('answers /health and /api/v1/auth/info without a key', async () => {
    const handler = make();
    expect(await (await call(handler, '/health')).json()).toEqual({ status: 'ok' });
    const info = await call(handler, '/api/v1/auth/info');
    expect(info.status).toBe(200);
    expect(await info.json()).toEqual({ auth_type: 'api-key' });
    expect(await (await call(make({ auth: { type: 'none' } }), '/api/v1/auth/info')).json()).toEqual({
      auth_type: 'none',
    });
  });

  it('reports the build with the spec field names and answers GET only, HEAD included', async () => {
    const handler = make({ version: { version: '2.0.1', commit: 'abc', modified: true, build_time: 'now' } });
    const body = await (await call(handler, '/api/v1/version')).json();
    expect(body).toMatchObject({ version: '2.0.1', commit: 'abc', modified: true, build_time: 'now' });
    expect(body.go_version).toBe(process.version);
    expect(body.runtime).toContain(process.version);
    for (const method of ['HEAD', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await call(handler, '/api/v1/version', { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('GET');
    }
    const post = await call(handler, '/api/v1/version', { method: 'POST' });
    expect(post.headers.get('content-type')).toBe('application/problem+json');
    // Every other GET route still answers HEAD, and its 405 lists it.
    expect((await call(handler, '/health', { method: 'HEAD' })).status).toBe(200);
    expect((await call(handler, '/health', { method: 'POST' })).headers.get('allow')).toBe('GET, HEAD');
  });

  it('is ready only when every check is ok', async () => {
    let dbOk = true;
    const handler = make({ readiness: async () => ({ storage: { ok: dbOk } }) });
    expect((await call(handler, '/ready')).status).toBe(200);
    dbOk = false;
    const res = await call(handler, '/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not_ready', checks: { storage: { ok: false } } });
  });
});

describe('authentication', () => {
  it('answers 401 problem JSON that does not say which part was wrong', async () => {
    const handler = make();
    const details = new Set<string>();
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong' },
      { authorization: `Basic ${SECRET}` },
      { authorization: `Bearer ${SECRET}x` },
    ]) {
      const res = await call(handler, '/api/v1/openapi.json', { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      const body = await res.json();
      expect(body).toMatchObject({ status: 401, error: 'unauthorized' });
      details.add(body.detail);
    }
    expect(details.size).toBe(1);
    expect((await call(handler, '/api/v1/openapi.json', { headers: auth })).status).toBe(200);
  });

  it('authenticates before answering 404, whatever the path', async () => {
    const handler = make();
    for (const path of [
      '/api/v1/nothing-here',
      '/nothing-here',
      '/acme/directory',
      '/.well-known/est/cacerts',
    ]) {
      expect((await call(handler, path)).status, path).toBe(401);
      const res = await call(handler, path, { headers: auth });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found', status: 404 });
    }
  });

  it('lets everyone through as admin with auth none', async () => {
    const handler = make({ auth: { type: 'none' } });
    expect((await call(handler, '/api/v1/openapi.json')).status).toBe(200);
  });
});

describe('routes contributed by features', () => {
  const widget = z.object({ name: z.string().min(1).max(10), size: z.number().int().optional() });

  function withRoutes(principal?: Principal) {
    const service = vi.fn(async (name: string) => ({ name }));
    const handler = make({
      maxBodyBytes: 2048,
      authenticators: principal ? [async (t) => (t === 'other' ? principal : null)] : [],
      routes: [
        defineRoute({
          method: 'POST',
          path: '/api/v1/widgets',
          operationId: 'createWidget',
          permission: 'system.read',
          summary: 'create',
          tags: ['test'],
          body: widget,
          responses: { 201: { description: 'created', schema: widget } },
          handle: async ({ body }) => ({ status: 201, body: await service(body.name) }),
        }),
        defineRoute({
          method: 'DELETE',
          path: '/api/v1/widgets/{id}',
          operationId: 'deleteWidget',
          summary: 'delete',
          tags: ['test'],
          permission: 'issuer.write',
          params: z.object({ id: z.string() }),
          responses: { 204: { description: 'deleted' } },
          handle: async ({ params }) => {
            await service(params.id);
            return { status: 204 };
          },
        }),
        defineRoute({
          method: 'GET',
          path: '/api/v1/boom',
          operationId: 'boom',
          permission: 'system.read',
          summary: 'fails',
          tags: ['test'],
          responses: {},
          handle: async () => {
            throw new Error('secret detail at /srv/app/db.ts: SELECT * FROM keys');
          },
        }),
        defineRoute({
          method: 'GET',
          path: '/api/v1/taken',
          operationId: 'taken',
          permission: 'system.read',
          summary: 'conflicts',
          tags: ['test'],
          responses: { 409: { description: 'taken' } },
          handle: async () => {
            throw new CertwrightError('conflict', "widget 'w' already exists", { extra: { id: 'w' } });
          },
        }),
      ],
    });
    return { handler, service };
  }
  const post = (body: string, headers: Record<string, string> = {}) => ({
    method: 'POST',
    body,
    headers: { ...auth, 'content-type': 'application/json', ...headers },
  });

  it('validates bodies and names the missing or wrong field', async () => {
    const { handler, service } = withRoutes();
    const missing = await call(handler, '/api/v1/widgets', post('{}'));
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toEqual([{ field: 'name', message: 'is required' }]);
    const wrong = await call(handler, '/api/v1/widgets', post('{"name":"x","size":"big"}'));
    expect((await wrong.json()).errors[0].field).toBe('size');
    const invalid = await call(handler, '/api/v1/widgets', post('{"name":'));
    expect((await invalid.json()).errors).toEqual([{ field: 'body', message: 'is not valid JSON' }]);
    expect(service).not.toHaveBeenCalled();
    const ok = await call(handler, '/api/v1/widgets', post('{"name":"x"}'));
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ name: 'x' });
  });

  it('refuses an oversized body with 413 before the handler runs', async () => {
    const { handler, service } = withRoutes();
    const big = JSON.stringify({ name: 'x'.repeat(5000) });
    const declared = await call(handler, '/api/v1/widgets', post(big));
    expect(declared.status).toBe(413);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('x'.repeat(1000)));
        c.close();
      },
    });
    const streamed = await call(handler, '/api/v1/widgets', {
      method: 'POST',
      body: stream,
      headers: auth,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(service).not.toHaveBeenCalled();
  });

  it("answers 403 to a principal without the route's permission, naming it, without calling the service", async () => {
    const { handler, service } = withRoutes({
      kind: 'session',
      id: 'u-1',
      permissions: new Set(['system.read']),
    });
    const res = await call(handler, '/api/v1/widgets/w1', {
      method: 'DELETE',
      headers: { authorization: 'Bearer other' },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toBe('this operation requires the permission issuer.write');
    expect(service).not.toHaveBeenCalled();
    expect((await call(handler, '/api/v1/widgets/w1', { method: 'DELETE', headers: auth })).status).toBe(204);
    expect(service).toHaveBeenCalledWith('w1');
  });

  it('refuses at start-up a route that is neither public nor names a catalogue permission', () => {
    const route = (extra: Record<string, unknown>) =>
      ({
        method: 'GET',
        path: '/api/v1/odd',
        operationId: 'odd',
        summary: 'odd',
        tags: ['test'],
        responses: {},
        handle: async () => ({ status: 204 }),
        ...extra,
      }) as unknown as RouteSpec;
    expect(() => make({ routes: [route({ permission: null })] })).toThrow(/must name a permission/);
    expect(() => make({ routes: [route({ permission: 'cert.everything' })] })).toThrow(/cert\.everything/);
    expect(() =>
      make({ routes: [route({ permission: 'cert.read', public: { why: 'x', rateLimit: 'public' } })] }),
    ).toThrow(/public and cannot also require cert\.read/);
    expect(() => make({ routes: [route({ permission: 'cert.read' })] })).not.toThrow();
  });

  it('denies a principal whose permissions are missing or malformed', async () => {
    for (const principal of [
      { kind: 'session', id: 'u-2' },
      { kind: 'session', id: 'u-3', permissions: ['issuer.write'] },
      { kind: 'session', id: 'u-4', permissions: 'ALL' },
      Object.create({ permissions: 'all', kind: 'session', id: 'u-5' }),
    ] as unknown as Principal[]) {
      const { handler, service } = withRoutes(principal);
      const res = await call(handler, '/api/v1/widgets/w1', {
        method: 'DELETE',
        headers: { authorization: 'Bearer other' },
      });
      expect(res.status).toBe(403);
      expect(service).not.toHaveBeenCalled();
    }
  });

  it('never leaks internals of an unexpected error', async () => {
    const { handler } = withRoutes();
    const res = await call(handler, '/api/v1/boom', { headers: { ...auth, 'x-request-id': 'req-42' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe('req-42');
    const text = await res.text();
    expect(text).not.toMatch(/secret|SELECT|\/srv|at /);
    expect(JSON.parse(text)).toMatchObject({ error: 'internal', request_id: 'req-42' });
  });

  it('maps typed errors to their status with extra members', async () => {
    const { handler } = withRoutes();
    const res = await call(handler, '/api/v1/taken', { headers: auth });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: 'conflict',
      id: 'w',
      detail: "widget 'w' already exists",
    });
  });

  it('describes every route in the OpenAPI document', async () => {
    const { handler } = withRoutes();
    const doc = await (await call(handler, '/api/v1/openapi.json', { headers: auth })).json();
    expect(doc.openapi).toBe('3.1.0');
    for (const route of handler.routes) {
      expect(doc.paths[route.path][route.method.toLowerCase()].operationId).toBe(route.operationId);
    }
    const create = doc.paths['/api/v1/widgets'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(doc.paths['/health'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/widgets/{id}'].delete['x-permission']).toBe('issuer.write');
    const page = await call(handler, '/docs/api');
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('/api/v1/widgets/{id}');
  });
});
