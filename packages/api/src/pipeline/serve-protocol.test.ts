import { MemoryEphemeralStore, silentLogger } from '@certwright/core';
import type { ProtocolMount } from '@certwright/protocols/mount';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import { DEFAULT_RATE_LIMITS, RateLimiter } from '../http/rate-limit.js';
import type { Authenticate } from './authenticate.js';
import type { Outcome } from './outcome.js';
import { publicRateLimit } from './rate-limit.js';
import { protocolSteps } from './serve-protocol.js';

const transport = { remoteAddress: '127.0.0.3' };
const head = (method = 'POST') => ({ method, url: 'https://127.0.0.1/p/x', headers: new Headers() });
const noBody = async () => new Uint8Array(0);

function steps(principal: Principal | Response, enrollment = 1) {
  const limiter = new RateLimiter(
    new MemoryEphemeralStore(),
    { ...DEFAULT_RATE_LIMITS, enrollment },
    silentLogger,
  );
  const authenticate: Authenticate = async (_h, _t, _id, outcome) => {
    if (!(principal instanceof Response)) outcome.principal = principal;
    return principal;
  };
  return protocolSteps(
    publicRateLimit(limiter, (_h, t) => t.remoteAddress),
    authenticate,
  );
}

const answered: string[] = [];
const mount = (access: Partial<ProtocolMount>): ProtocolMount => ({
  prefix: '/p',
  route: '/p/{path}',
  answer: async (h) => {
    answered.push(h.method);
    return new Response('answered');
  },
  operationOf: (h) => (h.method === 'POST' ? 'postP' : undefined),
  ...access,
});

describe('protocolSteps', () => {
  it("names route and operation, spends a public mount's limit, then answers with its own over-limit answer", async () => {
    const serve = steps(new Response(null, { status: 401 }));
    const m = mount({
      public: { why: 'in-protocol authentication', rateLimit: 'enrollment' },
      rateLimited: (seconds) => new Response(`wait ${seconds}`, { status: 429 }),
    });
    const outcome: Outcome = { route: 'unmatched' };
    expect(await ((await serve(m, head(), noBody, transport, 'req', outcome)) as Response).text()).toBe(
      'answered',
    );
    expect(outcome).toMatchObject({ route: '/p/{path}', operationId: 'postP', protocol: true });
    const limited = await serve(m, head(), noBody, transport, 'req', { route: 'r' });
    expect(limited.status).toBe(429);
    expect(await (limited as Response).text()).toMatch(/^wait \d+$/);
  });

  it('authenticates a mount that is not public and guards it like a REST route', async () => {
    answered.length = 0;
    const m = mount({ permission: 'admin.est.reload' });
    expect(
      (await steps(new Response(null, { status: 401 }))(m, head(), noBody, transport, 'r', { route: 'r' }))
        .status,
    ).toBe(401);
    const reader: Principal = { kind: 'session', id: 'u', permissions: new Set(['cert.read']) };
    expect((await steps(reader)(m, head(), noBody, transport, 'r', { route: 'r' })).status).toBe(403);
    const agent: Principal = { kind: 'agent', id: 'a', permissions: 'all' };
    expect((await steps(agent)(m, head(), noBody, transport, 'r', { route: 'r' })).status).toBe(403);
    const cookie: Principal = { kind: 'session', id: 'u', permissions: 'all', viaCookie: true };
    expect((await steps(cookie)(m, head(), noBody, transport, 'r', { route: 'r' })).status).toBe(403);
    expect(answered).toEqual([]);
    const admin: Principal = { kind: 'api-key', id: 'api-key', permissions: 'all' };
    expect((await steps(admin)(m, head(), noBody, transport, 'r', { route: 'r' })).status).toBe(200);
    expect(answered).toEqual(['POST']);
  });
});
