import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { Logger } from './logger.js';
import {
  assertEnqueueOptions,
  backoffDelay,
  type ClaimedJob,
  type FailOutcome,
  runQueueWorker,
} from './queue.js';

describe('backoffDelay', () => {
  it('doubles from one second by default and caps at five minutes', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(backoffDelay(30)).toBe(300_000);
  });

  it('follows the given base, factor and cap', () => {
    const options = { baseMs: 100, factor: 3, maxMs: 1_000 };
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, options))).toEqual([100, 300, 900, 1_000]);
  });
});

describe('queue argument checks', () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return isCertwrightError(error) ? error.code : error;
    }
    return 'no error';
  };

  it('rejects an empty topic, a bad maxAttempts and an invalid runAt', () => {
    expect(code(() => assertEnqueueOptions('', {}))).toBe('bad_request');
    expect(code(() => assertEnqueueOptions('t', { maxAttempts: 1.5 }))).toBe('bad_request');
    expect(code(() => assertEnqueueOptions('t', { runAt: new Date('nope') }))).toBe('bad_request');
    expect(code(() => assertEnqueueOptions('t', { maxAttempts: 1, runAt: new Date() }))).toBe('no error');
  });

  it('refuses to start a worker without positive concurrency and lease', () => {
    const primitives = {
      claim: async () => [],
      complete: async () => true,
      fail: async () => 'lost' as const,
      extendLease: async () => true,
    };
    const handler = async () => {};
    expect(code(() => runQueueWorker(primitives, 't', handler, { concurrency: 0, leaseMs: 1_000 }))).toBe(
      'bad_request',
    );
    expect(code(() => runQueueWorker(primitives, 't', handler, { concurrency: 1, leaseMs: 0 }))).toBe(
      'bad_request',
    );
  });
});

describe('runQueueWorker failure lines', () => {
  it('logs each failed attempt once, with attempt, budget and next retry, the stack only at debug', async () => {
    const lines: { level: string; fields: Record<string, unknown>; message?: string }[] = [];
    const logger: Logger = {
      debug: (fields, message) => lines.push({ level: 'debug', fields: { ...fields }, message }),
      info: () => {},
      warn: (fields, message) => lines.push({ level: 'warn', fields: { ...fields }, message }),
      error: (fields, message) => lines.push({ level: 'error', fields: { ...fields }, message }),
      child: () => logger,
    };
    const now = new Date();
    const job = (attempts: number): ClaimedJob => ({
      id: `job-${attempts}`,
      topic: 't',
      payload: {},
      state: 'running',
      attempts,
      maxAttempts: 2,
      runAt: now,
      createdAt: now,
      updatedAt: now,
      leaseId: `lease-${attempts}`,
      leaseExpiresAt: now,
    });
    const batches: ClaimedJob[][] = [[job(1)], [job(2)]];
    let recorded!: () => void;
    const bothRecorded = new Promise<void>((resolve) => {
      recorded = resolve;
    });
    const failed: FailOutcome[] = ['retry', 'dead'];
    const primitives = {
      claim: async <P>() => (batches.shift() ?? []) as ClaimedJob<P>[],
      complete: async () => true,
      fail: async () => {
        const outcome = failed.shift()!;
        if (failed.length === 0) setImmediate(recorded);
        return outcome;
      },
      extendLease: async () => true,
    };
    const worker = runQueueWorker(
      primitives,
      't',
      async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
      },
      { concurrency: 1, leaseMs: 60_000, pollIntervalMs: 1, logger, backoff: { baseMs: 60_000 } },
    );
    await bothRecorded;
    await worker.stop();
    const summary = lines.filter((line) => line.level !== 'debug');
    expect(
      summary.map((line) => [line.level, line.message, line.fields.attempt, line.fields.outcome]),
    ).toEqual([
      ['warn', 'job attempt failed', 1, 'retry'],
      ['error', 'job is dead after its last attempt', 2, 'dead'],
    ]);
    const [retry, dead] = summary;
    expect(retry!.fields).toMatchObject({
      job_id: 'job-1',
      max_attempts: 2,
      error: { type: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:9' },
    });
    // The next attempt one backoff (60 s after attempt 1) from now.
    const next = Date.parse(retry!.fields.next_retry_at as string);
    expect(next).toBeGreaterThan(now.getTime());
    expect(dead!.fields.next_retry_at).toBeNull();
    for (const line of summary) expect(line.fields.err).toBeUndefined();
    // The error object itself, with its stack, only in the debug lines.
    const details = lines.filter((line) => line.level === 'debug');
    expect(details).toHaveLength(2);
    expect((details[0]!.fields.err as Error).stack).toContain('ECONNREFUSED');
  });
});
