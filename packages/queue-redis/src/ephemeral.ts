import { randomUUID } from 'node:crypto';
import {
  assertCounterStep,
  assertPositiveMs,
  CertwrightError,
  type EphemeralStore,
  type SlidingWindowResult,
} from '@certwright/core';
import { guarded, LUA_NOW, LuaScript, type RedisClient } from './connection.js';

export interface RedisEphemeralStoreOptions {
  /** Prepended to every key, e.g. `certwright:` (default). Lets tests and tenants isolate. */
  prefix?: string;
}

// Fixed window in one hash {w: window start, c: count}: a new window overwrites the old one,
// and the key expires with its window so idle counters cost nothing.
const FIXED_WINDOW = new LuaScript(`${LUA_NOW}
local window = tonumber(ARGV[1])
local start = now - (now % window)
local count
if tonumber(redis.call('HGET', KEYS[1], 'w')) == start then
  count = redis.call('HINCRBY', KEYS[1], 'c', 1)
else
  redis.call('HSET', KEYS[1], 'w', start, 'c', 1)
  count = 1
end
redis.call('PEXPIREAT', KEYS[1], start + window)
return count
`);

// Sliding window as a sorted set of allowed hits scored by time. Members carry a random suffix
// so two hits in the same millisecond are both counted.
const SLIDING_WINDOW = new LuaScript(`${LUA_NOW}
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, count + 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
local retry = tonumber(oldest[2]) + window - now
if retry < 1 then retry = 1 end
return {0, count, retry}
`);

const ACQUIRE_LEASE = new LuaScript(`
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`);

const RENEW_LEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

const RELEASE_LEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`);

/**
 * {@link EphemeralStore} on Redis, shared by every server instance. Expiry uses Redis's own
 * TTLs and clock, so instances with skewed clocks agree. Single-key operations use native
 * atomic commands (SET NX PX, GETDEL); read-modify-write ones run as Lua scripts.
 * Requires Redis ≥ 6.2 (GETDEL). Standalone Redis or a primary; not Redis Cluster.
 */
export class RedisEphemeralStore implements EphemeralStore {
  readonly #client: RedisClient;
  readonly #prefix: string;

  constructor(client: RedisClient, options: RedisEphemeralStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? 'certwright:';
  }

  async putIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    const reply = await guarded('putIfAbsent', () =>
      this.#client.set(this.#key('v', key), value, {
        condition: 'NX',
        expiration: { type: 'PX', value: ttlMs },
      }),
    );
    return reply === 'OK';
  }

  async get(key: string): Promise<string | undefined> {
    const value = await guarded('get', () => this.#client.get(this.#key('v', key)));
    return value ?? undefined;
  }

  async consume(key: string): Promise<string | undefined> {
    const value = await guarded('consume', () => this.#client.getDel(this.#key('v', key)));
    return value ?? undefined;
  }

  async delete(key: string): Promise<boolean> {
    return (await guarded('delete', () => this.#client.del(this.#key('v', key)))) > 0;
  }

  async incrementFixedWindow(key: string, windowMs: number): Promise<number> {
    assertPositiveMs('windowMs', windowMs);
    const reply = await guarded('incrementFixedWindow', () =>
      FIXED_WINDOW.run(this.#client, [this.#key('fw', key)], [windowMs]),
    );
    return Number(reply);
  }

  async slidingWindowHit(key: string, windowMs: number, limit: number): Promise<SlidingWindowResult> {
    assertPositiveMs('windowMs', windowMs);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new CertwrightError('bad_request', `limit must be a positive integer, got ${limit}`);
    }
    const reply = (await guarded('slidingWindowHit', () =>
      SLIDING_WINDOW.run(this.#client, [this.#key('sw', key)], [windowMs, limit, randomUUID()]),
    )) as [number, number, number];
    return { allowed: reply[0] === 1, count: Number(reply[1]), retryAfterMs: Number(reply[2]) };
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    const reply = await guarded('acquireLease', () =>
      ACQUIRE_LEASE.run(this.#client, [this.#key('lease', name)], [holder, ttlMs]),
    );
    return reply === 1;
  }

  async renewLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    assertPositiveMs('ttlMs', ttlMs);
    const reply = await guarded('renewLease', () =>
      RENEW_LEASE.run(this.#client, [this.#key('lease', name)], [holder, ttlMs]),
    );
    return reply === 1;
  }

  async releaseLease(name: string, holder: string): Promise<boolean> {
    const reply = await guarded('releaseLease', () =>
      RELEASE_LEASE.run(this.#client, [this.#key('lease', name)], [holder]),
    );
    return reply === 1;
  }

  async incrementCounter(key: string, by = 1): Promise<number> {
    assertCounterStep(by);
    const reply = await guarded('incrementCounter', () => this.#client.incrBy(this.#key('n', key), by));
    return Number(reply);
  }

  async readCounters(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const replies = await guarded('readCounters', () =>
      this.#client.mGet(keys.map((key) => this.#key('n', key))),
    );
    return replies.map((reply) => (reply === null ? 0 : Number(reply)));
  }

  #key(namespace: 'v' | 'fw' | 'sw' | 'lease' | 'n', key: string): string {
    return `${this.#prefix}eph:${namespace}:${key}`;
  }
}
