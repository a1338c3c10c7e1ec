import type { RequestHead, TransportContext } from '@certwright/core';
import { type ClientAddressResolver, clientKey } from '../http/client-address.js';
import { problem } from '../http/problem.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { PublicAccess } from '../http/route.js';
import type { Outcome } from './outcome.js';

/**
 * Spends the client's rate limit of a public route or mount; the seconds to wait when it is
 * exhausted. A class whose limit is off costs nothing: no client address, no store, no promise
 * (the OCSP direct entry answers without one).
 */
export type PublicRateLimit = (
  access: PublicAccess,
  head: RequestHead,
  transport: TransportContext,
  outcome: Outcome,
) => Promise<number | undefined> | undefined;

export function publicRateLimit(limiter: RateLimiter, clientAddress: ClientAddressResolver): PublicRateLimit {
  return (access, head, transport, outcome) => {
    if (!limiter.counts(access.rateLimit)) return undefined;
    const client = clientKey(clientAddress(head, transport));
    return limiter.request(access.rateLimit, outcome.route, client).then((verdict) => {
      if (verdict.allowed) return undefined;
      outcome.rateLimited = true;
      return verdict.retryAfterSeconds;
    });
  };
}

/** The REST form of an over-limit answer: 429 problem JSON with `Retry-After` (RFC 6585 §4). */
export function tooManyRequests(requestId: string, retryAfterSeconds: number, detail: string): Response {
  return problem({
    status: 429,
    code: 'rate_limited',
    detail: `${detail}; retry after ${retryAfterSeconds} s`,
    requestId,
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}
