import { CertwrightError } from '../errors.js';
import { type Clock, systemClock } from '../ports/clock.js';
import {
  assertCounterStep,
  assertPositiveMs,
  type EphemeralStore,
  type SlidingWindowResult,
} from '../ports/ephemeral.js';

export interface MemoryEphemeralStoreOptions {
  clock?: Clock;
  /**
   * Upper bound on live entries across all namespaces. When a write would exceed it even after
   * purging expired entries, the write fails with `unavailable` rather than evicting live
   * entries: silently dropping a replay-cache entry or a lease would break their guarantees.
   * Default 1,000,000.
   */
  maxEntries?: number;
  /** Expired entries are purged at most this often (amortized over writes). Default 60,000 ms. */
  sweepIntervalMs?: number;
}

interface ValueEntry {
  value: string;
  expiresAt: number;
}
interface FixedWindowEntry {
  windowStart: number;
  count: number;
  expiresAt: number;
}
interface SlidingEntry {
  /** Allowed hits, oldest first. At most `limit` long because rejected hits are not recorded. */
  hits: number[];
  expiresAt: number;
}
interface LeaseEntry {
  holder: string;
  expiresAt: number;
}

/**
 * In-process {@link EphemeralStore}: correct for a single server instance only, since nothing
 * is shared between processes. JavaScript runs each method body without interleaving, which is
 * what makes every operation atomic here. No timers: expired entries are purged during writes,
 * so the store never keeps a process alive and time can be driven by a ManualClock.
 */
export class MemoryEphemeralStore implements EphemeralStore {
  readonly #clock: Clock;
  readonly #maxEntries: number;
  readonly #sweepIntervalMs: number;
  readonly #values = new Map<string, ValueEntry>();
  readonly #fixed = new Map<string, FixedWindowEntry>();
  readonly #sliding = new Map<string, SlidingEntry>();
  readonly #leases = new Map<string, LeaseEntry>();
  readonly #counters = new Map<string, number>();
  #lastSweep: number;

  constructor(options: MemoryEphemeralStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#maxEntries = options.maxEntries ?? 1_000_000;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.#lastSweep = this.#now();
  }

  /** Live and not-yet-purged entries across all namespaces (for metrics and tests). */
  get size(): number {
    return (
      this.#values.size + this.#fixed.size + this.#sliding.size + this.#leases.size + this.#counters.size
    );
  }

  async putIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    const now = this.#now();
    if (this.#live(this.#values, key, now)) return false;
    this.#beforeInsert(now);
    this.#values.set(key, { value, expiresAt: now + ttlMs });
    return true;
  }

  async get(key: string): Promise<string | undefined> {
    return this.#live(this.#values, key, this.#now())?.value;
  }

  async consume(key: string): Promise<string | undefined> {
    const entry = this.#live(this.#values, key, this.#now());
    if (!entry) return undefined;
    this.#values.delete(key);
    return entry.value;
  }

  async delete(key: string): Promise<boolean> {
    const live = this.#live(this.#values, key, this.#now()) !== undefined;
    this.#values.delete(key);
    return live;
  }

  async incrementFixedWindow(key: string, windowMs: number): Promise<number> {
    assertPositiveMs('windowMs', windowMs);
    const now = this.#now();
    const windowStart = now - (now % windowMs);
    const entry = this.#fixed.get(key);
    if (entry && entry.windowStart === windowStart && entry.expiresAt > now) {
      entry.count += 1;
      return entry.count;
    }
    if (!entry) this.#beforeInsert(now);
    this.#fixed.set(key, { windowStart, count: 1, expiresAt: windowStart + windowMs });
    return 1;
  }

  async slidingWindowHit(key: string, windowMs: number, limit: number): Promise<SlidingWindowResult> {
    assertPositiveMs('windowMs', windowMs);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new CertwrightError('bad_request', `limit must be a positive integer, got ${limit}`);
    }
    const now = this.#now();
    let entry = this.#sliding.get(key);
    const hits = entry ? entry.hits.filter((at) => at > now - windowMs) : [];
    if (hits.length >= limit) {
      // hits is sorted, so the oldest counted hit decides when a slot opens.
      const oldest = hits[hits.length - limit] ?? now;
      if (entry) entry.hits = hits;
      return { allowed: false, count: hits.length, retryAfterMs: Math.max(1, oldest + windowMs - now) };
    }
    hits.push(now);
    if (!entry) {
      this.#beforeInsert(now);
      entry = { hits, expiresAt: now + windowMs };
      this.#sliding.set(key, entry);
    }
    entry.hits = hits;
    entry.expiresAt = now + windowMs;
    return { allowed: true, count: hits.length, retryAfterMs: 0 };
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    const now = this.#now();
    const current = this.#live(this.#leases, name, now);
    if (current && current.holder !== holder) return false;
    if (!current) this.#beforeInsert(now);
    this.#leases.set(name, { holder, expiresAt: now + ttlMs });
    return true;
  }

  async renewLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    const now = this.#now();
    const current = this.#live(this.#leases, name, now);
    if (!current || current.holder !== holder) return false;
    current.expiresAt = now + ttlMs;
    return true;
  }

  async releaseLease(name: string, holder: string): Promise<boolean> {
    const current = this.#live(this.#leases, name, this.#now());
    if (!current || current.holder !== holder) return false;
    this.#leases.delete(name);
    return true;
  }

  async incrementCounter(key: string, by = 1): Promise<number> {
    assertCounterStep(by);
    const current = this.#counters.get(key);
    if (current === undefined) {
      if (by === 0) return 0;
      this.#beforeInsert(this.#now());
    }
    const total = (current ?? 0) + by;
    this.#counters.set(key, total);
    return total;
  }

  async readCounters(keys: readonly string[]): Promise<number[]> {
    return keys.map((key) => this.#counters.get(key) ?? 0);
  }

  /** Removes every expired entry now; returns how many were removed. */
  purgeExpired(): number {
    const now = this.#now();
    let removed = 0;
    for (const map of [this.#values, this.#fixed, this.#sliding, this.#leases] as Map<
      string,
      { expiresAt: number }
    >[]) {
      for (const [key, entry] of map) {
        if (entry.expiresAt <= now) {
          map.delete(key);
          removed += 1;
        }
      }
    }
    this.#lastSweep = now;
    return removed;
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  /** The entry if live; an expired one is dropped on sight so reads also reclaim memory. */
  #live<T extends { expiresAt: number }>(map: Map<string, T>, key: string, now: number): T | undefined {
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry;
    map.delete(key);
    return undefined;
  }

  /** Called before adding a new key: purge when due or when full, then enforce the bound. */
  #beforeInsert(now: number): void {
    if (now - this.#lastSweep >= this.#sweepIntervalMs || this.size >= this.#maxEntries) this.purgeExpired();
    if (this.size >= this.#maxEntries) {
      throw new CertwrightError(
        'unavailable',
        `in-memory ephemeral store is full (${this.#maxEntries} live entries)`,
        { extra: { max_entries: this.#maxEntries } },
      );
    }
  }
}
