import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient, RedisEphemeralStore, RedisQueue } from '../src/index.js';
import { deletePrefix, REDIS_URL, runPrefix, sleep, testRedis } from './support.js';

const { client: first, skip } = await testRedis();
const prefix = runPrefix('specific');

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached within the liveness bound');
    await sleep(20);
  }
}

describe.skipIf(skip !== undefined)('Redis queue and store across instances', () => {
  if (skip) console.warn(`[queue-redis] skipping Redis-specific tests: ${skip}`);
  // Separate connections stand for separate server instances sharing one Redis.
  const instances: RedisClient[] = [];

  beforeAll(async () => {
    if (!first) throw new Error(`Redis at ${REDIS_URL} is unreachable and SVC_TEST_REQUIRE_SERVICES=1`);
    instances.push(first);
    for (let i = 0; i < 3; i++) instances.push(await connectRedis({ url: REDIS_URL }));
  });

  afterAll(async () => {
    if (first) await deletePrefix(first, prefix);
    for (const client of instances) client.destroy();
  });

  it('hands each of 200 jobs to exactly one of 20 workers spread over 4 instances', async () => {
    const queues = instances.map((client) => new RedisQueue(client, { prefix }));
    const handled = new Map<string, number>();
    for (let i = 0; i < 200; i++) await queues[i % 4]!.enqueue('spread', { i });
    const workers = queues.flatMap((queue) =>
      Array.from({ length: 5 }, () =>
        queue.work(
          'spread',
          async (_payload, { job }) => {
            handled.set(job.id, (handled.get(job.id) ?? 0) + 1);
            await sleep(1);
          },
          { concurrency: 2, leaseMs: 60_000, pollIntervalMs: 10 },
        ),
      ),
    );
    await eventually(async () => handled.size === 200);
    await Promise.all(workers.map((w) => w.stop()));
    expect([...handled.values()].every((n) => n === 1)).toBe(true);
  });

  it('keeps a lease taken on one instance from every other instance', async () => {
    const stores = instances.map((client) => new RedisEphemeralStore(client, { prefix }));
    const results = await Promise.all(
      stores.map((store, i) => store.acquireLease('scheduler:renewal', `instance-${i}`, 60_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('does not confuse dedupe keys across topics that contain the separator', async () => {
    const queue = new RedisQueue(instances[0]!, { prefix });
    const a = await queue.enqueue('a:b', {}, { dedupeKey: 'c' });
    const b = await queue.enqueue('a', {}, { dedupeKey: 'b:c' });
    expect(a).not.toBe(b);
  });

  it('isolates queues and stores by key prefix', async () => {
    const other = runPrefix('other');
    try {
      const mine = new RedisQueue(instances[0]!, { prefix });
      const theirs = new RedisQueue(instances[0]!, { prefix: other });
      const id = await mine.enqueue('isolated', {});
      expect(await theirs.get(id)).toBeUndefined();
      expect(await theirs.claim('isolated', { limit: 10, leaseMs: 60_000 })).toEqual([]);
      const store = new RedisEphemeralStore(instances[0]!, { prefix });
      await store.putIfAbsent('k', 'v', 60_000);
      expect(await new RedisEphemeralStore(instances[0]!, { prefix: other }).get('k')).toBeUndefined();
    } finally {
      await deletePrefix(instances[0]!, other);
    }
  });

  it('forgets completed jobs after the retention, so the key space stays bounded', async () => {
    const queue = new RedisQueue(instances[0]!, { prefix, completedRetentionMs: 50 });
    const id = await queue.enqueue('retention', {}, { dedupeKey: 'once' });
    const [job] = await queue.claim('retention', { limit: 1, leaseMs: 60_000 });
    expect(await queue.complete(job!)).toBe(true);
    await eventually(async () => (await queue.get(id)) === undefined);
    const keys: string[] = [];
    for await (const batch of instances[0]!.scanIterator({ MATCH: `${prefix}q:*retention*`, COUNT: 500 })) {
      keys.push(...batch);
    }
    expect(keys).toEqual([]);
  });
});
