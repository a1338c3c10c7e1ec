import { MemoryEphemeralStore, silentLogger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import { DEFAULT_RATE_LIMITS, RateLimiter } from '../http/rate-limit.js';
import { defineRoute } from '../http/route.js';
import { Router } from '../http/router.js';
import type { Authenticate } from './authenticate.js';
import type { Outcome } from './outcome.js';
import { publicRateLimit } from './rate-limit.js';
import { routeSteps } from './serve-route.js';

const ran: string[] = [];
const router = new Router([
  defineRoute({
    method: 'POST',
    path: '/api/v1/things/{id}',
    operationId: 'createThing',
    summary: 'x',
    tags: [],
    permission: 'cert.write',
    params: z.object({ id: z.string() }),
    body: z.object({ name: z.string() }),
    responses: { 201: { description: 'created', schema: z.object({}) } },
    handle: async ({ params, body }) => {
      ran.push(`${(params as { id: string }).id} ${(body as { name: string }).name}`);
      return { status: 201, body: { ok: true } };
    },
  }),
]);

function serve(principal: Principal | null) {
  const limiter = new RateLimiter(new MemoryEphemeralStore(), DEFAULT_RATE_LIMITS, silentLogger);
  const authenticate: Authenticate = async (_h, _t, requestId) =>
    principal ?? new Response(requestId, { status: 401 });
  return routeSteps({
    router,
    rateLimit: publicRateLimit(limiter, (_h, t) => t.remoteAddress),
    authenticate,
    maxBodyBytes: 1024,
    logger: silentLogger,
  });
}
const call = (principal: Principal | null, path: string, init: RequestInit = {}) => {
  const request = new Request(`https://127.0.0.1${path}`, { method: 'POST', ...init });
  const outcome: Outcome = { route: 'unmatched' };
  return serve(principal)(request, new URL(request.url), { remoteAddress: '127.0.0.1' }, 'req', outcome).then(
    (response) => ({ response, outcome }),
  );
};
const writer: Principal = { kind: 'session', id: 'u', permissions: new Set(['cert.write']) };
const json = { 'content-type': 'application/json' };

describe('routeSteps', () => {
  it('runs the route with its validated input and answers its JSON', async () => {
    const { response, outcome } = await call(writer, '/api/v1/things/t1', {
      body: '{"name":"a"}',
      headers: json,
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ ok: true });
    expect(outcome).toMatchObject({ route: '/api/v1/things/{id}', operationId: 'createThing' });
    expect(ran).toEqual(['t1 a']);
  });

  it('answers unknown paths 404 and other methods 405 only after authentication', async () => {
    expect((await call(null, '/api/v1/nothing')).response.status).toBe(401);
    expect((await call(writer, '/api/v1/nothing')).response.status).toBe(404);
    expect((await call(null, '/api/v1/things/t1', { method: 'GET' })).response.status).toBe(401);
    const wrong = (await call(writer, '/api/v1/things/t1', { method: 'GET' })).response;
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  it('refuses before the route runs: permission, then media type', async () => {
    ran.length = 0;
    const reader: Principal = { kind: 'session', id: 'u', permissions: new Set(['cert.read']) };
    expect(
      (await call(reader, '/api/v1/things/t1', { body: '{"name":"a"}', headers: json })).response.status,
    ).toBe(403);
    const form = { body: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    expect((await call(writer, '/api/v1/things/t1', form)).response.status).toBe(415);
    expect(ran).toEqual([]);
  });
});
