import { type CertwrightError, fail } from '@certwright/core';

/** What a validation phase may still spend, and how it learns that the validation was abandoned. */
export interface Budget {
  /** Milliseconds left (at least 1: a phase started at the deadline fails on its own timer). */
  remainingMs(): number;
  /** Runs `cancel` once the validation is abandoned (deadline or abort), to free what is in flight. */
  onAbandon(cancel: () => void): void;
}

const duration = (ms: number): string => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);

const cancelled = (): CertwrightError =>
  fail('timed_out', 'the validation was cancelled before it completed');

/**
 * Settles like `work`, or rejects with `timed_out` at `timeoutMs` or when `signal` aborts —
 * whichever comes first. Each phase also receives the remaining time, so its own sockets and
 * queries close at the deadline rather than linger behind an answer already given.
 */
export function withinBudget<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  what: string,
  work: (budget: Budget) => Promise<T>,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(cancelled());
  const until = performance.now() + timeoutMs;
  const cancels: (() => void)[] = [];
  let abandoned = false;
  const abandon = () => {
    abandoned = true;
    for (const cancel of cancels.splice(0)) {
      try {
        cancel();
      } catch {
        // Freeing resources of an abandoned phase must not turn the answer into another error.
      }
    }
  };
  const budget: Budget = {
    remainingMs: () => Math.max(1, Math.ceil(until - performance.now())),
    onAbandon: (cancel) => {
      if (abandoned) cancel();
      else cancels.push(cancel);
    },
  };
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (error: unknown, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) resolve(value as T);
      else reject(error);
    };
    const timer = setTimeout(() => {
      abandon();
      settle(fail('timed_out', `${what} did not complete within ${duration(timeoutMs)}`));
    }, timeoutMs);
    const onAbort = () => {
      abandon();
      settle(cancelled());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    work(budget).then(
      (value) => settle(undefined, value),
      (error: unknown) => settle(error ?? fail('connection_failed', `${what} failed`)),
    );
  });
}
