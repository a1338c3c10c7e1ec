import { CertwrightError } from '../errors.js';

/**
 * Short-lived shared state with TTLs: nonces, replay caches, rate-limit counters, and leases
 * (locks) that make one instance run each scheduler tick; plus plain event counters for
 * observability that every instance adds to and reads alike. Default: in-process memory (one
 * server instance); Redis when several instances share one database.
 *
 * Semantics every implementation guarantees (checked by `describeEphemeralContract`):
 * - Values, fixed-window counters, sliding windows, leases and plain counters live in five
 *   separate namespaces: a value key `x`, a counter `x` and a lease `x` never collide.
 * - An entry whose TTL has passed behaves exactly as if it were absent, whether or not its
 *   storage has been reclaimed yet.
 * - Each single method is atomic across all callers of the same backend, including callers in
 *   other processes (for shared backends).
 * - TTLs and windows are in milliseconds and must be positive integers (`bad_request`
 *   otherwise); expiry is measured on the backend's single time source (the injected Clock for
 *   memory, the Redis server's clock for Redis) so instances with skewed clocks still agree.
 * - An unreachable backend surfaces as `CertwrightError` code `unavailable`.
 */
export interface EphemeralStore {
  /**
   * Stores `value` under `key` for `ttlMs` unless a live entry exists. `true` if stored.
   * Typical use: issue a nonce, or record a request id in a replay cache (`false` = replay).
   */
  putIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;

  /** The live value, without consuming it. */
  get(key: string): Promise<string | undefined>;

  /**
   * Removes the live entry and returns its value. Exactly once: among any number of concurrent
   * callers for one key, one receives the value and all others `undefined`.
   */
  consume(key: string): Promise<string | undefined>;

  /** Removes the entry; `true` if a live entry was removed. */
  delete(key: string): Promise<boolean>;

  /**
   * Adds one hit to the fixed window containing now and returns that window's count including
   * this hit. Windows are aligned to multiples of `windowMs` since the Unix epoch, so all
   * instances agree where a window starts; the count restarts at 1 in the next window.
   */
  incrementFixedWindow(key: string, windowMs: number): Promise<number>;

  /**
   * Sliding-window limiter: counts the allowed hits in the last `windowMs` (the half-open
   * interval (now − windowMs, now]). If fewer than `limit`, records this hit and answers
   * `{allowed: true, count: hits including this one, retryAfterMs: 0}`. Otherwise records
   * nothing and answers `{allowed: false, count: hits in the window, retryAfterMs: time until
   * the oldest counted hit leaves the window}` (≥ 1). Rejected hits never extend a lock-out.
   */
  slidingWindowHit(key: string, windowMs: number, limit: number): Promise<SlidingWindowResult>;

  /**
   * Takes the lease `name` for `holder` for `ttlMs` if it is free or expired. `true` if the
   * holder now has it. Re-acquiring a lease one already holds succeeds and resets its TTL;
   * a live lease of another holder is never taken.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;

  /** Resets the TTL to `ttlMs` if `holder` holds the live lease; `false` otherwise (lost it). */
  renewLease(name: string, holder: string, ttlMs: number): Promise<boolean>;

  /** Frees the lease if `holder` holds it; `false` (and nothing changes) otherwise. */
  releaseLease(name: string, holder: string): Promise<boolean>;

  /**
   * Adds `by` (a non-negative integer, default 1) to a plain counter without TTL and returns
   * its new total; an absent counter starts at 0. For event counters an operator reads (not
   * for limits: those are the windowed methods). Totals live as long as the backend's data.
   */
  incrementCounter(key: string, by?: number): Promise<number>;

  /** The totals of plain counters, in the order of `keys`; 0 for a counter never incremented. */
  readCounters(keys: readonly string[]): Promise<number[]>;
}

export interface SlidingWindowResult {
  allowed: boolean;
  count: number;
  retryAfterMs: number;
}

/** Shared argument check so every implementation rejects the same bad input the same way. */
export function assertPositiveMs(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new CertwrightError(
      'bad_request',
      `${name} must be a positive integer of milliseconds, got ${value}`,
    );
  }
}

/** Shared argument check of `incrementCounter`. */
export function assertCounterStep(by: number): void {
  if (!Number.isSafeInteger(by) || by < 0) {
    throw new CertwrightError('bad_request', `a counter step must be a non-negative integer, got ${by}`);
  }
}
