import { MemoryEphemeralStore, silentLogger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS, RateLimiter } from '../http/rate-limit.js';
import type { Outcome } from './outcome.js';
import { publicRateLimit, tooManyRequests } from './rate-limit.js';

const head = { method: 'GET', url: 'https://127.0.0.1/.well-known/pki/ocsp/x', headers: new Headers() };
const transport = { remoteAddress: '127.0.0.9' };
const pki = { why: 'relying parties', rateLimit: 'pki' as const };

function limit(pkiPerWindow: number) {
  const store = new MemoryEphemeralStore();
  const limiter = new RateLimiter(store, { ...DEFAULT_RATE_LIMITS, pki: pkiPerWindow }, silentLogger);
  return publicRateLimit(limiter, (_head, t) => t.remoteAddress);
}

describe('publicRateLimit', () => {
  it('costs nothing for a class whose limit is off: no promise, no count', () => {
    const outcome: Outcome = { route: '/r' };
    expect(limit(0)(pki, head, transport, outcome)).toBeUndefined();
    expect(outcome.rateLimited).toBeUndefined();
  });

  it('lets a client through up to its limit per route, then says how long to wait and marks the outcome', async () => {
    const spend = limit(2);
    const outcome: Outcome = { route: '/r' };
    expect(await spend(pki, head, transport, outcome)).toBeUndefined();
    expect(await spend(pki, head, transport, outcome)).toBeUndefined();
    expect(outcome.rateLimited).toBeUndefined();
    const wait = await spend(pki, head, transport, outcome);
    expect(wait).toBeGreaterThan(0);
    expect(outcome.rateLimited).toBe(true);
    // Another route and another client have their own budgets.
    expect(await spend(pki, head, transport, { route: '/other' })).toBeUndefined();
    expect(await spend(pki, head, { remoteAddress: '127.0.0.10' }, { route: '/r' })).toBeUndefined();
  });
});

describe('tooManyRequests', () => {
  it('is a 429 problem with Retry-After and the request id', async () => {
    const response = tooManyRequests('req-1', 7, 'too many requests from this client');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toMatchObject({
      error: 'rate_limited',
      request_id: 'req-1',
      detail: 'too many requests from this client; retry after 7 s',
    });
  });
});
