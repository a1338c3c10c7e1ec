import { silentLogger } from '@certwright/core';
import { connectRedis, type RedisClient, RedisEphemeralStore, RedisQueue } from '@certwright/queue-redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLeasedTask } from '../src/schedulers/index.js';
import { type PrivateRedis, redisServerSkipReason, startPrivateRedis } from './support/private-services.js';

const skip = redisServerSkipReason();
if (skip) console.warn(`skipping scheduler election and job claim tests: ${skip}`);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * What three instances share through one Redis, each over its own connection as separate
 * processes would: the scheduler lease (one instance per tick) and queue claims (one handler
 * per job). The process-level scale-out test is scale-out.test.ts.
 */
describe.skipIf(skip !== undefined)('three instances sharing Redis', () => {
  let redis: PrivateRedis;
  const clients: RedisClient[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    for (let i = 0; i < 3; i++) clients.push(await connectRedis({ url: redis.url }));
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await redis?.stop();
  });

  it('runs a scheduler tick on exactly one instance', async () => {
    const runs = [0, 0, 0];
    let active = 0;
    let maxActive = 0;
    const stores = clients.map((client) => new RedisEphemeralStore(client));
    const tasks = clients.map((_, i) =>
      startLeasedTask({
        name: 'scheduler:scale-test',
        holder: `instance-${i}`,
        // The timer does not fire during the test: ticks are driven below, all three at once.
        intervalMs: 60_000,
        ephemeral: stores[i]!,
        logger: silentLogger,
        run: async () => {
          runs[i]!++;
          active++;
          maxActive = Math.max(maxActive, active);
          await new Promise((r) => setTimeout(r, 20));
          active--;
        },
      }),
    );
    try {
      const rounds = 4;
      for (let round = 0; round < rounds; round++) {
        const ran = await Promise.all(tasks.map((t) => t.tick()));
        expect(ran.filter(Boolean)).toHaveLength(1);
        // While the lease lives, a second tick anywhere else is skipped.
        const winner = ran.indexOf(true);
        const others = tasks.filter((_, i) => i !== winner);
        expect(await Promise.all(others.map((t) => t.tick()))).toEqual([false, false]);
        // Stands in for the lease lapsing at the end of the interval.
        expect(await stores[winner]!.releaseLease('scheduler:scale-test', `instance-${winner}`)).toBe(true);
      }
      expect(runs.reduce((a, b) => a + b, 0)).toBe(rounds);
      // Never two instances in the same tick's work at once.
      expect(maxActive).toBe(1);
    } finally {
      await Promise.all(tasks.map((t) => t.stop()));
    }
  });

  it('keeps the lease through a tick that outlasts it', async () => {
    const stores = clients.map((client) => new RedisEphemeralStore(client));
    let release: () => void = () => {};
    const slowWork = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    const tasks = stores.map((ephemeral, i) =>
      startLeasedTask({
        name: 'scheduler:scale-test-slow',
        holder: `instance-${i}`,
        // The lease is one second; the first tick below holds its work far longer.
        intervalMs: 1000,
        ephemeral,
        logger: silentLogger,
        run: async () => {
          runs++;
          if (i === 0) await slowWork;
        },
      }),
    );
    try {
      const first = tasks[0]!.tick();
      await waitFor(() => runs === 1, 'the slow tick to start');
      // Three lease lengths later the slow tick still holds it: nobody else runs.
      await new Promise((r) => setTimeout(r, 3000));
      expect(await Promise.all([tasks[1]!.tick(), tasks[2]!.tick()])).toEqual([false, false]);
      expect(runs).toBe(1);
      release();
      expect(await first).toBe(true);
    } finally {
      release();
      await Promise.all(tasks.map((t) => t.stop()));
    }
  });

  it('hands each job to exactly one worker', async () => {
    const queues = clients.map((client) => new RedisQueue(client));
    const topic = 'scale-test';
    const handled = new Map<number, string[]>();
    const workers = queues.map((queue, i) =>
      queue.work<{ n: number }>(
        topic,
        async ({ n }) => {
          handled.set(n, [...(handled.get(n) ?? []), `worker-${i}`]);
          await new Promise((r) => setTimeout(r, 5));
        },
        { concurrency: 4, leaseMs: 30_000, pollIntervalMs: 50 },
      ),
    );
    try {
      const jobs = 90;
      await Promise.all(Array.from({ length: jobs }, (_, n) => queues[n % 3]!.enqueue(topic, { n })));
      await waitFor(() => handled.size === jobs, 'every job to be handled');
      // Settle: a double delivery would show up as a second entry.
      await new Promise((r) => setTimeout(r, 300));
      expect([...handled.values()].every((by) => by.length === 1)).toBe(true);
      const perWorker = new Set([...handled.values()].map((by) => by[0]));
      expect(perWorker.size).toBeGreaterThan(1);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });
});
