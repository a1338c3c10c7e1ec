import type { EphemeralStore, Logger } from '@certwright/core';
import { acmeProblem } from './problem.js';

/** Requests one account may sign per window, on every endpoint of the server; null: no limit. */
export interface AccountRequestLimit {
  limit: number;
  windowMs: number;
}

/**
 * The per-account limit (docs/protocols/acme.md, "Rate limits"): every request signed by an
 * account spends its budget, counted in the ephemeral store so that every instance sees the
 * same count. It is what still holds when the per-address limit is raised for clients behind
 * one NAT or cluster egress address. Over it: `rateLimited` (429) with `Retry-After`. A store
 * that fails lets the request through, logged at most once a minute.
 */
export function accountRequestSpender(
  store: EphemeralStore,
  limit: AccountRequestLimit | null,
  logger: Logger,
): (accountId: string) => Promise<void> {
  let lastWarning = Number.NEGATIVE_INFINITY;
  return async (accountId) => {
    if (!limit || limit.limit === 0) return;
    let hit: Awaited<ReturnType<EphemeralStore['slidingWindowHit']>>;
    try {
      hit = await store.slidingWindowHit(`ratelimit:acme-account:${accountId}`, limit.windowMs, limit.limit);
    } catch (error) {
      const now = performance.now();
      if (now - lastWarning >= 60_000) {
        lastWarning = now;
        logger.warn({ err: error }, 'ACME account limit not enforced: the ephemeral store failed');
      }
      return;
    }
    if (hit.allowed) return;
    const seconds = Math.max(1, Math.ceil(hit.retryAfterMs / 1000));
    throw acmeProblem('rateLimited', `too many requests from this account; retry after ${seconds} s`, {
      status: 429,
      headers: { 'retry-after': String(seconds) },
    });
  };
}
