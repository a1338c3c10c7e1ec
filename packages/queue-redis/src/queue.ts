import { randomUUID } from 'node:crypto';
import {
  assertEnqueueOptions,
  CertwrightError,
  type ClaimedJob,
  type ClaimOptions,
  DEFAULT_MAX_ATTEMPTS,
  type EnqueueOptions,
  type FailOutcome,
  type JobHandler,
  type ListDeadOptions,
  type Queue,
  type QueueJob,
  type QueueJobState,
  type QueueWorker,
  runQueueWorker,
  type WorkOptions,
} from '@certwright/core';
import { guarded, LUA_NOW, LuaScript, type RedisClient } from './connection.js';

export interface RedisQueueOptions {
  /** Prepended to every key, e.g. `certwright:` (default). Lets tests and tenants isolate. */
  prefix?: string;
  /** How long a completed job stays readable through `get()`. Default 3,600,000 ms (1 hour). */
  completedRetentionMs?: number;
}

/*
 * Key layout (P = prefix):
 *   P:q:job:<id>                      hash: the job (fields as in QueueJob; times in epoch ms)
 *   P:q:ready:<topic>                 zset of pending job ids scored by runAt
 *   P:q:running:<topic>               zset of running job ids scored by lease expiry
 *   P:q:dead:<topic>, P:q:dead        zsets of dead job ids scored by time of death
 *   P:q:dedupe:<len(topic)>:<topic>:<key>   id of the pending/running job holding the key
 * The topic's length is part of the dedupe key so that topic "a:b" + key "c" and topic "a" +
 * key "b:c" cannot collide. Scripts touch job hashes by computed name, which is fine on a
 * standalone Redis (the supported deployment) but not on Redis Cluster.
 */

// Shared Lua fragments. `release_dedupe` frees a job's dedupe key only if the job still holds it.
const LUA_HELPERS = `${LUA_NOW}
local function release_dedupe(job_key, id, dedupe_prefix)
  local dk = redis.call('HGET', job_key, 'dedupeKey')
  if dk and redis.call('GET', dedupe_prefix .. dk) == id then redis.call('DEL', dedupe_prefix .. dk) end
end
local function make_dead(job_key, id, err, dead_topic, dead_all, dedupe_prefix)
  redis.call('HSET', job_key, 'state', 'dead', 'lastError', err, 'updatedAt', now)
  redis.call('HDEL', job_key, 'leaseId', 'leaseExpiresAt')
  redis.call('ZADD', dead_topic, now, id)
  redis.call('ZADD', dead_all, now, id)
  release_dedupe(job_key, id, dedupe_prefix)
end
`;

// KEYS: job, ready, dedupe (optional). ARGV: id, topic, payload, maxAttempts, runAt|'', dedupeKey|''
const ENQUEUE = new LuaScript(`${LUA_NOW}
if ARGV[6] ~= '' then
  local existing = redis.call('GET', KEYS[3])
  if existing then return existing end
end
local run_at = now
if ARGV[5] ~= '' then run_at = tonumber(ARGV[5]) end
redis.call('HSET', KEYS[1], 'topic', ARGV[2], 'payload', ARGV[3], 'state', 'pending', 'attempts', 0,
  'maxAttempts', ARGV[4], 'runAt', run_at, 'createdAt', now, 'updatedAt', now)
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[1], 'dedupeKey', ARGV[6])
  redis.call('SET', KEYS[3], ARGV[1])
end
redis.call('ZADD', KEYS[2], run_at, ARGV[1])
return ARGV[1]
`);

// KEYS: ready, running, dead(topic), dead(all). ARGV: job prefix, dedupe prefix, leaseMs, lease ids…
// First returns expired deliveries to pending (or dead), then claims due jobs, earliest first.
const CLAIM = new LuaScript(`${LUA_HELPERS}
local job_prefix, dedupe_prefix, lease_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local limit = #ARGV - 3
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
for _, id in ipairs(expired) do
  local job_key = job_prefix .. id
  redis.call('ZREM', KEYS[2], id)
  local attempts = tonumber(redis.call('HGET', job_key, 'attempts'))
  if attempts then
    local err = 'lease expired: the worker stopped before recording an outcome'
    if attempts >= tonumber(redis.call('HGET', job_key, 'maxAttempts')) then
      make_dead(job_key, id, err, KEYS[3], KEYS[4], dedupe_prefix)
    else
      redis.call('HSET', job_key, 'state', 'pending', 'runAt', now, 'lastError', err, 'updatedAt', now)
      redis.call('HDEL', job_key, 'leaseId', 'leaseExpiresAt')
      redis.call('ZADD', KEYS[1], now, id)
    end
  end
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local claimed = {}
for i, id in ipairs(due) do
  local job_key = job_prefix .. id
  redis.call('ZREM', KEYS[1], id)
  if redis.call('EXISTS', job_key) == 1 then
    redis.call('HINCRBY', job_key, 'attempts', 1)
    redis.call('HSET', job_key, 'state', 'running', 'leaseId', ARGV[3 + i],
      'leaseExpiresAt', now + lease_ms, 'updatedAt', now)
    redis.call('ZADD', KEYS[2], now + lease_ms, id)
    claimed[#claimed + 1] = redis.call('HGETALL', job_key)
    table.insert(claimed[#claimed], 'id')
    table.insert(claimed[#claimed], id)
  end
end
return claimed
`);

// KEYS: job, running. ARGV: id, leaseId, dedupe prefix, retentionMs
const COMPLETE = new LuaScript(`${LUA_HELPERS}
if redis.call('HGET', KEYS[1], 'state') ~= 'running' or redis.call('HGET', KEYS[1], 'leaseId') ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'completed', 'updatedAt', now)
redis.call('HDEL', KEYS[1], 'leaseId', 'leaseExpiresAt')
release_dedupe(KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`);

// KEYS: job, running, ready, dead(topic), dead(all). ARGV: id, leaseId, dedupe prefix, error, delayMs
const FAIL = new LuaScript(`${LUA_HELPERS}
if redis.call('HGET', KEYS[1], 'state') ~= 'running' or redis.call('HGET', KEYS[1], 'leaseId') ~= ARGV[2] then
  return 'lost'
end
redis.call('ZREM', KEYS[2], ARGV[1])
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts'))
if attempts >= tonumber(redis.call('HGET', KEYS[1], 'maxAttempts')) then
  make_dead(KEYS[1], ARGV[1], ARGV[4], KEYS[4], KEYS[5], ARGV[3])
  return 'dead'
end
local run_at = now + tonumber(ARGV[5])
redis.call('HSET', KEYS[1], 'state', 'pending', 'runAt', run_at, 'lastError', ARGV[4], 'updatedAt', now)
redis.call('HDEL', KEYS[1], 'leaseId', 'leaseExpiresAt')
redis.call('ZADD', KEYS[3], run_at, ARGV[1])
return 'retry'
`);

// KEYS: job, running. ARGV: id, leaseId, leaseMs
const EXTEND = new LuaScript(`${LUA_NOW}
if redis.call('HGET', KEYS[1], 'state') ~= 'running' or redis.call('HGET', KEYS[1], 'leaseId') ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], 'leaseExpiresAt', now + tonumber(ARGV[3]), 'updatedAt', now)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 1
`);

// KEYS: job, ready, dead(topic), dead(all), dedupe (optional). ARGV: id
const REQUEUE = new LuaScript(`${LUA_NOW}
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 'not_found' end
if state ~= 'dead' then return 'not_dead' end
if KEYS[5] then
  local holder = redis.call('GET', KEYS[5])
  if holder and holder ~= ARGV[1] then return 'dedupe_taken' end
  redis.call('SET', KEYS[5], ARGV[1])
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', 0, 'runAt', now, 'updatedAt', now)
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[2], now, ARGV[1])
return 'ok'
`);

/**
 * {@link Queue} on Redis for several server instances. Every state change is one Lua script, so
 * claims, lease checks and dedupe are atomic across instances; times come from the Redis
 * server's clock. Payloads are stored as JSON. Completed jobs expire after
 * `completedRetentionMs`; dead jobs stay until requeued.
 */
export class RedisQueue implements Queue {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #retentionMs: number;

  constructor(client: RedisClient, options: RedisQueueOptions = {}) {
    this.#client = client;
    this.#prefix = `${options.prefix ?? 'certwright:'}q:`;
    this.#retentionMs = options.completedRetentionMs ?? 3_600_000;
  }

  async enqueue<P>(topic: string, payload: P, options: EnqueueOptions = {}): Promise<string> {
    assertEnqueueOptions(topic, options);
    let text: string | undefined;
    try {
      text = JSON.stringify(payload);
    } catch (error) {
      throw new CertwrightError('bad_request', 'queue payload must be JSON-serializable', { cause: error });
    }
    if (text === undefined)
      throw new CertwrightError('bad_request', 'queue payload must be JSON-serializable');
    const id = `qj-${randomUUID()}`;
    const keys = [this.#jobKey(id), this.#ready(topic)];
    if (options.dedupeKey !== undefined) keys.push(this.#dedupePrefix(topic) + options.dedupeKey);
    const reply = await guarded('enqueue', () =>
      ENQUEUE.run(this.#client, keys, [
        id,
        topic,
        text,
        options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        options.runAt ? options.runAt.getTime() : '',
        options.dedupeKey ?? '',
      ]),
    );
    return String(reply);
  }

  work<P>(topic: string, handler: JobHandler<P>, options: WorkOptions): QueueWorker {
    return runQueueWorker(this, topic, handler, options);
  }

  async get<P = unknown>(id: string): Promise<QueueJob<P> | undefined> {
    const hash = await guarded('get', () => this.#client.hGetAll(this.#jobKey(id)));
    return Object.keys(hash).length === 0 ? undefined : toJob<P>(id, hash);
  }

  async listDead(options: ListDeadOptions = {}): Promise<QueueJob[]> {
    const key = options.topic === undefined ? `${this.#prefix}dead` : this.#dead(options.topic);
    const limit = options.limit ?? 100;
    return guarded('listDead', async () => {
      const ids = await this.#client.zRange(key, 0, limit - 1, { REV: true });
      const hashes = await Promise.all(ids.map((id) => this.#client.hGetAll(this.#jobKey(id))));
      return ids.flatMap((id, i) => {
        const hash = hashes[i];
        return hash && Object.keys(hash).length > 0 ? [toJob(id, hash)] : [];
      });
    });
  }

  async requeue(id: string): Promise<void> {
    const topic = await guarded('requeue', () => this.#client.hGet(this.#jobKey(id), 'topic'));
    if (topic == null) throw new CertwrightError('not_found', `queue job '${id}' does not exist`);
    const dedupeKey = await guarded('requeue', () => this.#client.hGet(this.#jobKey(id), 'dedupeKey'));
    const keys = [this.#jobKey(id), this.#ready(topic), this.#dead(topic), `${this.#prefix}dead`];
    if (dedupeKey != null) keys.push(this.#dedupePrefix(topic) + dedupeKey);
    const reply = await guarded('requeue', () => REQUEUE.run(this.#client, keys, [id]));
    if (reply === 'not_found') throw new CertwrightError('not_found', `queue job '${id}' does not exist`);
    if (reply === 'not_dead') throw new CertwrightError('conflict', `queue job '${id}' is not dead`);
    if (reply === 'dedupe_taken') {
      throw new CertwrightError(
        'conflict',
        `another job of topic '${topic}' holds dedupe key '${dedupeKey}'`,
      );
    }
  }

  async claim<P = unknown>(topic: string, options: ClaimOptions): Promise<ClaimedJob<P>[]> {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new CertwrightError('bad_request', 'claim limit must be a positive integer');
    }
    const leaseIds = Array.from({ length: options.limit }, () => randomUUID());
    const reply = (await guarded('claim', () =>
      CLAIM.run(
        this.#client,
        [this.#ready(topic), this.#running(topic), this.#dead(topic), `${this.#prefix}dead`],
        [`${this.#prefix}job:`, this.#dedupePrefix(topic), Math.ceil(options.leaseMs), ...leaseIds],
      ),
    )) as string[][];
    return reply.map((flat) => {
      const hash = pairs(flat);
      return { ...toJob<P>(hash.id ?? '', hash), leaseId: hash.leaseId ?? '' } as ClaimedJob<P>;
    });
  }

  async complete(job: Pick<ClaimedJob, 'id' | 'leaseId'>): Promise<boolean> {
    const topic = await this.#topicOf(job.id);
    if (topic === undefined) return false;
    const reply = await guarded('complete', () =>
      COMPLETE.run(
        this.#client,
        [this.#jobKey(job.id), this.#running(topic)],
        [job.id, job.leaseId, this.#dedupePrefix(topic), this.#retentionMs],
      ),
    );
    return reply === 1;
  }

  async fail(
    job: Pick<ClaimedJob, 'id' | 'leaseId'>,
    error: string,
    retryDelayMs: number,
  ): Promise<FailOutcome> {
    const topic = await this.#topicOf(job.id);
    if (topic === undefined) return 'lost';
    const reply = await guarded('fail', () =>
      FAIL.run(
        this.#client,
        [
          this.#jobKey(job.id),
          this.#running(topic),
          this.#ready(topic),
          this.#dead(topic),
          `${this.#prefix}dead`,
        ],
        [job.id, job.leaseId, this.#dedupePrefix(topic), error, Math.max(0, Math.ceil(retryDelayMs))],
      ),
    );
    return reply as FailOutcome;
  }

  async extendLease(job: Pick<ClaimedJob, 'id' | 'leaseId'>, leaseMs: number): Promise<boolean> {
    const topic = await this.#topicOf(job.id);
    if (topic === undefined) return false;
    const reply = await guarded('extendLease', () =>
      EXTEND.run(
        this.#client,
        [this.#jobKey(job.id), this.#running(topic)],
        [job.id, job.leaseId, Math.ceil(leaseMs)],
      ),
    );
    return reply === 1;
  }

  /** A job's topic never changes, so reading it outside the script is safe. */
  async #topicOf(id: string): Promise<string | undefined> {
    const topic = await guarded('read job', () => this.#client.hGet(this.#jobKey(id), 'topic'));
    return topic ?? undefined;
  }

  #jobKey(id: string): string {
    return `${this.#prefix}job:${id}`;
  }
  #ready(topic: string): string {
    return `${this.#prefix}ready:${topic}`;
  }
  #running(topic: string): string {
    return `${this.#prefix}running:${topic}`;
  }
  #dead(topic: string): string {
    return `${this.#prefix}dead:${topic}`;
  }
  #dedupePrefix(topic: string): string {
    return `${this.#prefix}dedupe:${topic.length}:${topic}:`;
  }
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

const time = (ms: string | undefined) => new Date(Number(ms));

/** The stored job; the lease id stays internal (only its claimer gets it, from claim()). */
function toJob<P>(id: string, hash: Record<string, string>): QueueJob<P> {
  const job: QueueJob<P> = {
    id,
    topic: hash.topic ?? '',
    payload: JSON.parse(hash.payload ?? 'null') as P,
    state: (hash.state ?? 'pending') as QueueJobState,
    attempts: Number(hash.attempts ?? 0),
    maxAttempts: Number(hash.maxAttempts ?? DEFAULT_MAX_ATTEMPTS),
    runAt: time(hash.runAt),
    createdAt: time(hash.createdAt),
    updatedAt: time(hash.updatedAt),
  };
  if (hash.dedupeKey !== undefined) job.dedupeKey = hash.dedupeKey;
  if (hash.lastError !== undefined) job.lastError = hash.lastError;
  if (hash.leaseExpiresAt !== undefined) job.leaseExpiresAt = time(hash.leaseExpiresAt);
  return job;
}
