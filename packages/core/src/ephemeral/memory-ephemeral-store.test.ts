import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { ManualClock } from '../ports/clock.js';
import { describeEphemeralContract } from '../testing/ephemeral-contract.js';
import { MemoryEphemeralStore } from './memory-ephemeral-store.js';

describeEphemeralContract('memory', async () => {
  const clock = new ManualClock();
  return { store: new MemoryEphemeralStore({ clock }), advance: async (ms) => clock.advance(ms) };
});

describe('MemoryEphemeralStore bounds', () => {
  it('purges expired entries of every kind during later writes', async () => {
    const clock = new ManualClock();
    const store = new MemoryEphemeralStore({ clock, sweepIntervalMs: 1_000 });
    await store.putIfAbsent('value', 'v', 100);
    await store.incrementFixedWindow('counter', 100);
    await store.slidingWindowHit('window', 100, 5);
    await store.acquireLease('lease', 'a', 100);
    expect(store.size).toBe(4);
    clock.advance(1_000);
    await store.putIfAbsent('fresh', 'v', 60_000);
    expect(store.size).toBe(1);
  });

  it('refuses new entries with unavailable when full of live ones, instead of evicting them', async () => {
    const clock = new ManualClock();
    const store = new MemoryEphemeralStore({ clock, maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) await store.putIfAbsent(k, k, 60_000);
    const error = await store.putIfAbsent('d', 'd', 60_000).catch((e: unknown) => e);
    expect(isCertwrightError(error) && error.code).toBe('unavailable');
    expect(await store.get('a')).toBe('a');
  });

  it('makes room once entries expire, without waiting for the sweep interval', async () => {
    const clock = new ManualClock();
    const store = new MemoryEphemeralStore({ clock, maxEntries: 2, sweepIntervalMs: 3_600_000 });
    await store.putIfAbsent('a', 'a', 100);
    await store.acquireLease('b', 'x', 100);
    clock.advance(100);
    expect(await store.putIfAbsent('c', 'c', 100)).toBe(true);
    expect(store.size).toBe(1);
  });

  it('reports retry-after from the oldest counted hit', async () => {
    const clock = new ManualClock();
    const store = new MemoryEphemeralStore({ clock });
    await store.slidingWindowHit('k', 1_000, 2);
    clock.advance(300);
    await store.slidingWindowHit('k', 1_000, 2);
    clock.advance(200);
    expect(await store.slidingWindowHit('k', 1_000, 2)).toEqual({
      allowed: false,
      count: 2,
      retryAfterMs: 500,
    });
    clock.advance(500);
    expect(await store.slidingWindowHit('k', 1_000, 2)).toEqual({ allowed: true, count: 2, retryAfterMs: 0 });
  });

  it('aligns fixed windows to the epoch so every instance agrees where a window starts', async () => {
    const clock = new ManualClock('2026-01-01T00:00:59.900Z');
    const store = new MemoryEphemeralStore({ clock });
    expect(await store.incrementFixedWindow('k', 60_000)).toBe(1);
    clock.advance(100);
    expect(await store.incrementFixedWindow('k', 60_000)).toBe(1);
  });
});
