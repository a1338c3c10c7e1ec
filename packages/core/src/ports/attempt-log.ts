import { isCertwrightError } from '../errors.js';
import type { Logger } from './logger.js';

/** One failed attempt of something that is retried: a queue job, a notification delivery. */
export interface AttemptFailure {
  /** The line's message, e.g. `job attempt failed`. */
  message: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Attempts allowed in all, when the retrier has a budget. */
  maxAttempts?: number;
  /** When the next attempt is due; null when there is none (dead, or no longer ours). */
  nextRetryAt: Date | null;
  error: unknown;
  /** Which job or delivery: ids only, never payloads. */
  fields?: Record<string, unknown>;
  /** Default warn; a retrier gives `error` when this was the last attempt. */
  level?: 'warn' | 'error';
}

/**
 * Logs a failed attempt as one line without a stack: a receiver or a database that is down
 * fails the same way on every attempt, and a stack per attempt buries everything else in the
 * log (docs/operations/configuration.md, "Logs"). The line names the attempt, the budget and
 * when the next one runs; the error goes as its type, code and message. The full error, stack
 * included, is logged at debug beside it, for SVC_LOG_LEVEL=debug.
 */
export function logAttemptFailure(logger: Logger, failure: AttemptFailure): void {
  const where = {
    ...failure.fields,
    attempt: failure.attempt,
    ...(failure.maxAttempts !== undefined ? { max_attempts: failure.maxAttempts } : {}),
    next_retry_at: failure.nextRetryAt?.toISOString() ?? null,
  };
  logger[failure.level ?? 'warn']({ ...where, error: summaryOf(failure.error) }, failure.message);
  logger.debug({ ...where, err: failure.error }, `${failure.message} (details)`);
}

/** Type, code and message of an error: what an operator acts on, without the stack. */
export function summaryOf(error: unknown): { type: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) };
  const own = (error as { code?: unknown }).code;
  const code = isCertwrightError(error) ? error.code : typeof own === 'string' ? own : undefined;
  // A wrapped system error (fetch's "fetch failed") names the actual cause: ECONNREFUSED.
  const cause = (error as { cause?: unknown }).cause;
  const causeText =
    cause instanceof Error && cause.message && cause.message !== error.message ? `: ${cause.message}` : '';
  return {
    type: error.name,
    message: `${error.message || error.name}${causeText}`,
    ...(code !== undefined ? { code } : {}),
  };
}
