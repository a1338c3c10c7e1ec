import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { EphemeralStore } from '../ports/ephemeral.js';

/** What a factory hands the ephemeral-store contract suite. */
export interface EphemeralContractSubject {
  store: EphemeralStore;
  /**
   * Lets at least `ms` pass on the store's time source: `ManualClock.advance` for stores that
   * take a Clock, a real sleep for stores that use a server clock (Redis). The suite keeps such
   * durations short and never asserts how long anything took.
   */
  advance(ms: number): Promise<void>;
  /** Releases the subject (connections, keys under a test prefix). */
  close?(): Promise<void>;
}

export interface ContractOptions {
  /** When set, the whole suite is skipped and this reason is printed (e.g. service unreachable). */
  skip?: string | undefined;
}

/**
 * The behaviour every {@link EphemeralStore} must have. Call it from a test file of the
 * implementing package; `factory` runs before each test and `close` after it. Keys are random
 * per test, so subjects may share one backend.
 */
export function describeEphemeralContract(
  name: string,
  factory: () => Promise<EphemeralContractSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[ephemeral contract] skipping ${name}: ${options.skip}`);
    describe.skip(`EphemeralStore contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }

  describe(`EphemeralStore contract: ${name}`, () => {
    let subject: EphemeralContractSubject;
    let store: EphemeralStore;
    const key = (label: string) => `${label}:${randomUUID()}`;

    beforeEach(async () => {
      subject = await factory();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.close?.();
    });

    describe('values', () => {
      it('stores a value once and refuses a second put while it lives', async () => {
        const k = key('nonce');
        expect(await store.putIfAbsent(k, 'first', 60_000)).toBe(true);
        expect(await store.putIfAbsent(k, 'second', 60_000)).toBe(false);
        expect(await store.get(k)).toBe('first');
      });

      it('treats an expired value as absent, for get, consume and a new put', async () => {
        const k = key('nonce');
        expect(await store.putIfAbsent(k, 'old', 100)).toBe(true);
        await subject.advance(150);
        expect(await store.get(k)).toBeUndefined();
        expect(await store.consume(k)).toBeUndefined();
        expect(await store.putIfAbsent(k, 'new', 60_000)).toBe(true);
        expect(await store.get(k)).toBe('new');
      });

      it('consumes a value exactly once', async () => {
        const k = key('nonce');
        await store.putIfAbsent(k, 'v', 60_000);
        expect(await store.consume(k)).toBe('v');
        expect(await store.consume(k)).toBeUndefined();
        expect(await store.get(k)).toBeUndefined();
      });

      it('gives one nonce to exactly one of 50 concurrent consumers', async () => {
        const k = key('nonce');
        await store.putIfAbsent(k, 'the-nonce', 60_000);
        const results = await Promise.all(Array.from({ length: 50 }, () => store.consume(k)));
        expect(results.filter((r) => r === 'the-nonce')).toHaveLength(1);
        expect(results.filter((r) => r === undefined)).toHaveLength(49);
      });

      it('lets exactly one of 50 concurrent putIfAbsent calls win', async () => {
        const k = key('replay');
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => store.putIfAbsent(k, `writer-${i}`, 60_000)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results.indexOf(true);
        expect(await store.get(k)).toBe(`writer-${winner}`);
      });

      it('deletes a live value and reports whether there was one', async () => {
        const k = key('v');
        await store.putIfAbsent(k, 'v', 60_000);
        expect(await store.delete(k)).toBe(true);
        expect(await store.delete(k)).toBe(false);
        expect(await store.get(k)).toBeUndefined();
      });

      it('round-trips values with arbitrary text', async () => {
        const k = key('text');
        const value = '{"a":"ü €\\n\\u0000 ✓"}';
        await store.putIfAbsent(k, value, 60_000);
        expect(await store.consume(k)).toBe(value);
      });

      it('rejects a TTL that is not a positive integer', async () => {
        for (const ttl of [0, -1, 1.5, Number.NaN]) {
          const error = await store.putIfAbsent(key('bad'), 'v', ttl).catch((e: unknown) => e);
          expect(isCertwrightError(error) && error.code).toBe('bad_request');
        }
      });
    });

    describe('fixed-window counters', () => {
      it('counts hits within one window', async () => {
        // A day-long window: crossing an epoch-aligned boundary mid-test is vanishingly unlikely.
        const k = key('fixed');
        expect(await store.incrementFixedWindow(k, 86_400_000)).toBe(1);
        expect(await store.incrementFixedWindow(k, 86_400_000)).toBe(2);
        expect(await store.incrementFixedWindow(k, 86_400_000)).toBe(3);
      });

      it('restarts at 1 in the next window', async () => {
        const k = key('fixed');
        await store.incrementFixedWindow(k, 100);
        await store.incrementFixedWindow(k, 100);
        await subject.advance(150);
        expect(await store.incrementFixedWindow(k, 100)).toBe(1);
      });

      it('counts every one of 50 concurrent hits', async () => {
        const k = key('fixed');
        const counts = await Promise.all(
          Array.from({ length: 50 }, () => store.incrementFixedWindow(k, 86_400_000)),
        );
        // Unless a window boundary fell inside the burst, the counts are exactly 1..50.
        expect(new Set(counts).size).toBe(50);
        expect(Math.max(...counts)).toBe(50);
      });

      it('keeps counters apart from values with the same key', async () => {
        const k = key('shared');
        await store.putIfAbsent(k, 'value', 60_000);
        expect(await store.incrementFixedWindow(k, 86_400_000)).toBe(1);
        expect(await store.get(k)).toBe('value');
      });
    });

    describe('plain counters', () => {
      it('adds to a counter and reads it back; an unknown counter reads 0', async () => {
        const a = key('count');
        const b = key('count');
        expect(await store.incrementCounter(a)).toBe(1);
        expect(await store.incrementCounter(a, 4)).toBe(5);
        expect(await store.incrementCounter(a, 0)).toBe(5);
        expect(await store.readCounters([a, b, a])).toEqual([5, 0, 5]);
        expect(await store.readCounters([])).toEqual([]);
      });

      it('counts every one of 50 concurrent increments', async () => {
        const k = key('count');
        const totals = await Promise.all(Array.from({ length: 50 }, () => store.incrementCounter(k)));
        expect(new Set(totals).size).toBe(50);
        expect(await store.readCounters([k])).toEqual([50]);
      });

      it('keeps counters apart from values and fixed windows with the same key', async () => {
        const k = key('shared');
        await store.putIfAbsent(k, 'value', 60_000);
        await store.incrementFixedWindow(k, 86_400_000);
        expect(await store.incrementCounter(k)).toBe(1);
        expect(await store.get(k)).toBe('value');
        expect(await store.incrementFixedWindow(k, 86_400_000)).toBe(2);
      });

      it('rejects a step that is negative or not an integer', async () => {
        for (const by of [-1, 1.5, Number.NaN]) {
          const error = await store.incrementCounter(key('count'), by).catch((e: unknown) => e);
          expect(isCertwrightError(error) && error.code).toBe('bad_request');
        }
      });
    });

    describe('sliding-window limiter', () => {
      it('allows up to the limit, then refuses with a retry-after inside the window', async () => {
        const k = key('sliding');
        const window = 60_000;
        for (let i = 1; i <= 3; i++) {
          expect(await store.slidingWindowHit(k, window, 3)).toEqual({
            allowed: true,
            count: i,
            retryAfterMs: 0,
          });
        }
        const refused = await store.slidingWindowHit(k, window, 3);
        expect(refused.allowed).toBe(false);
        expect(refused.count).toBe(3);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(window);
      });

      it('does not count refused hits', async () => {
        const k = key('sliding');
        await store.slidingWindowHit(k, 60_000, 1);
        for (let i = 0; i < 5; i++) expect((await store.slidingWindowHit(k, 60_000, 1)).count).toBe(1);
      });

      it('allows again once the counted hits left the window', async () => {
        const k = key('sliding');
        expect((await store.slidingWindowHit(k, 100, 2)).allowed).toBe(true);
        expect((await store.slidingWindowHit(k, 100, 2)).allowed).toBe(true);
        await subject.advance(150);
        expect(await store.slidingWindowHit(k, 100, 2)).toEqual({ allowed: true, count: 1, retryAfterMs: 0 });
      });

      it('admits exactly the limit among 50 concurrent hits', async () => {
        const k = key('sliding');
        const results = await Promise.all(
          Array.from({ length: 50 }, () => store.slidingWindowHit(k, 60_000, 7)),
        );
        expect(results.filter((r) => r.allowed)).toHaveLength(7);
        expect(results.filter((r) => !r.allowed).every((r) => r.count === 7)).toBe(true);
      });
    });

    describe('leases', () => {
      it('keeps a live lease from every other holder', async () => {
        const name = key('lease');
        expect(await store.acquireLease(name, 'a', 60_000)).toBe(true);
        expect(await store.acquireLease(name, 'b', 60_000)).toBe(false);
        expect(await store.renewLease(name, 'b', 60_000)).toBe(false);
        expect(await store.releaseLease(name, 'b')).toBe(false);
        // b's failed attempts changed nothing: a still holds it.
        expect(await store.renewLease(name, 'a', 60_000)).toBe(true);
        expect(await store.acquireLease(name, 'b', 60_000)).toBe(false);
      });

      it('lets the holder re-acquire and renew its own lease', async () => {
        const name = key('lease');
        expect(await store.acquireLease(name, 'a', 60_000)).toBe(true);
        expect(await store.acquireLease(name, 'a', 60_000)).toBe(true);
        expect(await store.renewLease(name, 'a', 60_000)).toBe(true);
      });

      it('hands an expired lease to another holder, and the old holder cannot renew it', async () => {
        const name = key('lease');
        expect(await store.acquireLease(name, 'a', 100)).toBe(true);
        await subject.advance(150);
        expect(await store.renewLease(name, 'a', 60_000)).toBe(false);
        expect(await store.acquireLease(name, 'b', 60_000)).toBe(true);
        expect(await store.releaseLease(name, 'a')).toBe(false);
        expect(await store.acquireLease(name, 'a', 60_000)).toBe(false);
      });

      it('frees a released lease at once', async () => {
        const name = key('lease');
        await store.acquireLease(name, 'a', 60_000);
        expect(await store.releaseLease(name, 'a')).toBe(true);
        expect(await store.releaseLease(name, 'a')).toBe(false);
        expect(await store.acquireLease(name, 'b', 60_000)).toBe(true);
      });

      it('grants a free lease to exactly one of 20 concurrent holders', async () => {
        const name = key('lease');
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.acquireLease(name, `holder-${i}`, 60_000)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = `holder-${results.indexOf(true)}`;
        expect(await store.renewLease(name, winner, 60_000)).toBe(true);
      });

      it('keeps leases apart from values with the same name', async () => {
        const k = key('shared');
        await store.putIfAbsent(k, 'value', 60_000);
        expect(await store.acquireLease(k, 'a', 60_000)).toBe(true);
        expect(await store.consume(k)).toBe('value');
        expect(await store.renewLease(k, 'a', 60_000)).toBe(true);
      });
    });
  });
}
