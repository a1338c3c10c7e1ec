import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { assertEnqueueOptions, backoffDelay, runQueueWorker } from './queue.js';

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
