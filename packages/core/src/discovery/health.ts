import type { HealthStatus } from '../domain/discovery.js';

/** Consecutive failed checks that make an endpoint degraded, and down. */
export const DEGRADED_AFTER_FAILURES = 2;
export const DOWN_AFTER_FAILURES = 5;

/** What one check found, judged against the expectation. */
export type CheckVerdict =
  /** Handshake completed and the served certificate is the expected one (or none is expected). */
  | 'match'
  /** Handshake completed but another certificate was served (a stale deployment among them). */
  | 'mismatch'
  /** No completed handshake: refused, reset, timed out, garbage, no certificate. */
  | 'failure';

/**
 * The health state machine (docs/api/discovery.md):
 * - a failure adds one to the consecutive failures; at 2 the endpoint is degraded, at 5 down;
 *   a single failure keeps the current status (one lost packet is not an outage);
 * - a completed handshake serving another certificate than expected is cert_mismatch at once;
 * - recovery: a completed handshake serving the expected certificate is healthy and clears
 *   the failure count, from any status.
 */
export function nextHealth(
  current: { status: HealthStatus; consecutive_failures: number },
  verdict: CheckVerdict,
): { status: HealthStatus; consecutive_failures: number } {
  if (verdict === 'match') return { status: 'healthy', consecutive_failures: 0 };
  if (verdict === 'mismatch') return { status: 'cert_mismatch', consecutive_failures: 0 };
  const failures = current.consecutive_failures + 1;
  const status: HealthStatus =
    failures >= DOWN_AFTER_FAILURES
      ? 'down'
      : failures >= DEGRADED_AFTER_FAILURES
        ? 'degraded'
        : current.status;
  return { status, consecutive_failures: failures };
}
