import { NOTIFICATION_RETRY_BUDGET } from '../domain/notification.js';

/**
 * The notification retry schedule, in one place.
 *
 * `retry_count` counts the failed delivery attempts recorded so far. Every failed attempt
 * (the first delivery of a pending event included) adds one, and the next attempt is due
 * 2^n minutes later, where n is the count *after* that increment, capped at one hour:
 *
 *   attempt 1 fails → count 1, retry in  2 min
 *   attempt 2 fails → count 2, retry in  4 min
 *   attempt 3 fails → count 3, retry in  8 min
 *   attempt 4 fails → count 4, retry in 16 min
 *   attempt 5 fails → count is 4 (not below 4) → dead; five attempts in all (§8's budget).
 *
 * A count raised some other way (an older row, an operator edit) only ever hits the one-hour
 * cap, never an overflow.
 */
export const RETRY_DEAD_AT_COUNT = NOTIFICATION_RETRY_BUDGET - 1;
export const RETRY_BACKOFF_CAP_MS = 60 * 60_000;

/** Delay before the next attempt once the count has become `retryCount`. */
export function retryDelayMs(retryCount: number): number {
  if (retryCount >= 6) return RETRY_BACKOFF_CAP_MS; // 2^6 min = 64 min is already past the cap
  return Math.min(2 ** Math.max(0, retryCount) * 60_000, RETRY_BACKOFF_CAP_MS);
}

/** What a failed attempt does to an event whose count is `retryCount` before the attempt. */
export function afterFailedAttempt(
  retryCount: number,
  now: Date,
): { status: 'failed'; retry_count: number; next_retry_at: Date } | { status: 'dead'; next_retry_at: null } {
  if (retryCount >= RETRY_DEAD_AT_COUNT) return { status: 'dead', next_retry_at: null };
  const next = retryCount + 1;
  return { status: 'failed', retry_count: next, next_retry_at: new Date(now.getTime() + retryDelayMs(next)) };
}
