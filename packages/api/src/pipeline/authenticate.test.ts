import { MemoryEphemeralStore, silentLogger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import type { AuthSettings, Principal } from '../auth/principal.js';
import { DEFAULT_RATE_LIMITS, RateLimiter } from '../http/rate-limit.js';
import { authenticator } from './authenticate.js';
import type { Outcome } from './outcome.js';

const transport = { remoteAddress: '127.0.0.7' };
const head = (authorization?: string) => ({
  method: 'GET',
  url: 'https://127.0.0.1/api/v1/certificates',
  headers: new Headers(authorization ? { authorization } : {}),
});

function authenticate(auth: AuthSettings, authFailures = 10) {
  const limiter = new RateLimiter(
    new MemoryEphemeralStore(),
    { ...DEFAULT_RATE_LIMITS, authFailures },
    silentLogger,
  );
  const team: Principal = { kind: 'session', id: 'u1', permissions: new Set() };
  return authenticator({
    auth,
    authenticators: [async (token) => (token === 'team-token' ? team : null)],
    limiter,
    clientAddress: (_head, t) => t.remoteAddress,
  });
}

describe('authenticator', () => {
  it('makes every caller the anonymous admin with SVC_AUTH_TYPE=none', async () => {
    const outcome: Outcome = { route: '/r' };
    const principal = await authenticate({ type: 'none' })(head(), transport, 'req', outcome);
    expect(principal).toMatchObject({ kind: 'anonymous', permissions: 'all' });
  });

  it('takes the API key, then the other authenticators, and names the principal in the outcome', async () => {
    const run = authenticate({ type: 'api-key', secret: 'the-key' });
    const outcome: Outcome = { route: '/r' };
    expect(await run(head('Bearer the-key'), transport, 'req', outcome)).toMatchObject({ kind: 'api-key' });
    expect(outcome.principal?.kind).toBe('api-key');
    expect(await run(head('Bearer team-token'), transport, 'req', { route: 'r' })).toMatchObject({
      id: 'u1',
    });
  });

  it('answers no or a wrong key with the same 401, never saying which part was wrong', async () => {
    const run = authenticate({ type: 'api-key', secret: 'the-key' });
    for (const authorization of [undefined, 'Bearer wrong', 'Basic dXNlcjpwdw==']) {
      const outcome: Outcome = { route: '/r' };
      const refused = await run(head(authorization), transport, 'req-2', outcome);
      expect(refused).toBeInstanceOf(Response);
      const response = refused as Response;
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.json()).toMatchObject({
        detail: 'a valid API key is required',
        request_id: 'req-2',
      });
      expect(outcome.principal).toBeUndefined();
    }
  });

  it('locks a client out with 429 after too many wrong keys, even when it then sends the right one', async () => {
    const run = authenticate({ type: 'api-key', secret: 'the-key' }, 2);
    await run(head('Bearer wrong'), transport, 'req', { route: 'r' });
    await run(head('Bearer wrong'), transport, 'req', { route: 'r' });
    const outcome: Outcome = { route: '/r' };
    const refused = (await run(head('Bearer the-key'), transport, 'req', outcome)) as Response;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(outcome.rateLimited).toBe(true);
    // Another client is not locked out.
    expect(
      await run(head('Bearer the-key'), { remoteAddress: '127.0.0.8' }, 'req', { route: 'r' }),
    ).toMatchObject({
      kind: 'api-key',
    });
  });
});
