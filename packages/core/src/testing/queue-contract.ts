import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { Queue, QueueJob, QueueWorker } from '../ports/queue.js';
import type { ContractOptions } from './ephemeral-contract.js';

/** What a factory hands the queue contract suite. */
export interface QueueContractSubject {
  queue: Queue;
  /** The queue's notion of now (a ManualClock's time, or the server clock). */
  now(): Date;
  /**
   * Lets at least `ms` pass on the queue's time source (ManualClock.advance, or a real sleep for
   * a server clock). The suite keeps such durations short and never asserts how long anything took.
   */
  advance(ms: number): Promise<void>;
  close?(): Promise<void>;
}

/** Polls `check` until it returns true. A liveness bound, not a timing assertion. */
async function eventually(
  check: () => Promise<boolean>,
  options: { timeoutMs?: number; onEachPoll?: () => Promise<void> } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not reached within the liveness bound');
    await options.onEachPoll?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const codeOf = (error: unknown) => (isCertwrightError(error) ? error.code : error);

/**
 * The behaviour every {@link Queue} must have (SQL engines, Redis). `factory` runs before each
 * test and `close` after it; each test uses its own random topics, so subjects may share one
 * backend and leftovers of other runs do not interfere.
 */
export function describeQueueContract(
  name: string,
  factory: () => Promise<QueueContractSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[queue contract] skipping ${name}: ${options.skip}`);
    describe.skip(`Queue contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }

  describe(`Queue contract: ${name}`, () => {
    let subject: QueueContractSubject;
    let queue: Queue;
    const workers: QueueWorker[] = [];
    const topic = () => `contract-${randomUUID()}`;

    beforeEach(async () => {
      subject = await factory();
      queue = subject.queue;
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await subject.close?.();
    });

    const mustGet = async (id: string): Promise<QueueJob> => {
      const job = await queue.get(id);
      if (!job) throw new Error(`job ${id} not found`);
      return job;
    };

    describe('enqueue', () => {
      it('stores a pending job with its payload and defaults', async () => {
        const t = topic();
        const payload = { certificate_id: 'mc-1', sans: ['a.example', 'ü.example'], n: 3, ok: true };
        const id = await queue.enqueue(t, payload);
        const job = await mustGet(id);
        expect(job).toMatchObject({ id, topic: t, payload, state: 'pending', attempts: 0, maxAttempts: 5 });
        expect(job.runAt.getTime()).toBeLessThanOrEqual(subject.now().getTime());
        expect(job.lastError).toBeUndefined();
        expect(await queue.get(`missing-${randomUUID()}`)).toBeUndefined();
      });

      it('returns the pending job for a dedupe key instead of adding a second one', async () => {
        const t = topic();
        const first = await queue.enqueue(t, { v: 1 }, { dedupeKey: 'renew:mc-1' });
        const second = await queue.enqueue(t, { v: 2 }, { dedupeKey: 'renew:mc-1' });
        expect(second).toBe(first);
        expect((await mustGet(first)).payload).toEqual({ v: 1 });
        const claimed = await queue.claim(t, { limit: 10, leaseMs: 60_000 });
        expect(claimed.map((j) => j.id)).toEqual([first]);
      });

      it('dedupes against a running job, and frees the key once it completed', async () => {
        const t = topic();
        const first = await queue.enqueue(t, {}, { dedupeKey: 'k' });
        const [job] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        expect(await queue.enqueue(t, {}, { dedupeKey: 'k' })).toBe(first);
        expect(await queue.complete(job!)).toBe(true);
        const next = await queue.enqueue(t, {}, { dedupeKey: 'k' });
        expect(next).not.toBe(first);
        expect((await mustGet(next)).state).toBe('pending');
      });

      it('scopes dedupe keys to the topic', async () => {
        const a = await queue.enqueue(topic(), {}, { dedupeKey: 'same' });
        const b = await queue.enqueue(topic(), {}, { dedupeKey: 'same' });
        expect(a).not.toBe(b);
      });

      it('creates exactly one job for 20 concurrent enqueues with one dedupe key', async () => {
        const t = topic();
        const ids = await Promise.all(
          Array.from({ length: 20 }, (_, i) => queue.enqueue(t, { i }, { dedupeKey: 'burst' })),
        );
        expect(new Set(ids).size).toBe(1);
        expect(await queue.claim(t, { limit: 50, leaseMs: 60_000 })).toHaveLength(1);
      });

      it('holds a job back until its runAt', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {}, { runAt: new Date(subject.now().getTime() + 100) });
        const later = await queue.enqueue(t, {}, { runAt: new Date(subject.now().getTime() + 3_600_000) });
        expect(await queue.claim(t, { limit: 10, leaseMs: 60_000 })).toEqual([]);
        await subject.advance(150);
        const claimed = await queue.claim(t, { limit: 10, leaseMs: 60_000 });
        expect(claimed.map((j) => j.id)).toEqual([id]);
        expect((await mustGet(later)).state).toBe('pending');
      });

      it('rejects a payload that JSON cannot represent', async () => {
        expect(codeOf(await queue.enqueue(topic(), undefined).catch((e: unknown) => e))).toBe('bad_request');
      });

      it('rejects an empty topic and a maxAttempts below 1', async () => {
        expect(codeOf(await queue.enqueue('', {}).catch((e: unknown) => e))).toBe('bad_request');
        const error = await queue.enqueue(topic(), {}, { maxAttempts: 0 }).catch((e: unknown) => e);
        expect(codeOf(error)).toBe('bad_request');
      });
    });

    describe('claim and leases', () => {
      it('claims due jobs earliest runAt first, up to the limit, with a lease and attempt count', async () => {
        const t = topic();
        const now = subject.now().getTime();
        const last = await queue.enqueue(t, { n: 'last' }, { runAt: new Date(now + 200) });
        const second = await queue.enqueue(t, { n: 'second' }, { runAt: new Date(now + 100) });
        const first = await queue.enqueue(t, { n: 'first' });
        await subject.advance(250);
        const claimed = await queue.claim(t, { limit: 2, leaseMs: 60_000 });
        expect(claimed.map((j) => j.id)).toEqual([first, second]);
        expect((await mustGet(last)).state).toBe('pending');
        for (const job of claimed) {
          expect(job.state).toBe('running');
          expect(job.attempts).toBe(1);
          expect(job.leaseId).toEqual(expect.any(String));
          expect(job.leaseExpiresAt.getTime()).toBeGreaterThan(subject.now().getTime());
          expect((await mustGet(job.id)).state).toBe('running');
        }
      });

      it('never hands one job to two of 20 concurrent claimers', async () => {
        const t = topic();
        const ids = new Set<string>();
        for (let i = 0; i < 200; i++) ids.add(await queue.enqueue(t, { i }));
        // SKIP LOCKED lets a claimer pass over a row another claimer holds (and may give back as
        // a deadlock victim), so one round need not drain the topic; workers poll again. What
        // must hold is that every job is handed out, and never to two claimers.
        const claimed: string[] = [];
        for (let round = 0; round < 5 && claimed.length < ids.size; round++) {
          const batches = await Promise.all(
            Array.from({ length: 20 }, () => queue.claim(t, { limit: 15, leaseMs: 60_000 })),
          );
          claimed.push(...batches.flat().map((j) => j.id));
        }
        expect(claimed).toHaveLength(200);
        expect(new Set(claimed)).toEqual(ids);
      });

      it('does not re-deliver a job while its lease is live', async () => {
        const t = topic();
        await queue.enqueue(t, {});
        expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toHaveLength(1);
        expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toEqual([]);
      });

      it('re-delivers a job whose worker died once the lease expired, fencing the old delivery', async () => {
        const t = topic();
        const id = await queue.enqueue(t, { n: 1 });
        const [dying] = await queue.claim(t, { limit: 1, leaseMs: 100 });
        await subject.advance(150);
        const [again] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        expect(again?.id).toBe(id);
        expect(again?.attempts).toBe(2);
        expect(again?.leaseId).not.toBe(dying?.leaseId);
        expect(await queue.complete(dying!)).toBe(false);
        expect(await queue.fail(dying!, 'late', 0)).toBe('lost');
        expect(await queue.extendLease(dying!, 60_000)).toBe(false);
        expect(await queue.complete(again!)).toBe(true);
        expect((await mustGet(id)).state).toBe('completed');
      });

      it('keeps a job whose lease was extended', async () => {
        const t = topic();
        await queue.enqueue(t, {});
        const [job] = await queue.claim(t, { limit: 1, leaseMs: 1_000 });
        expect(await queue.extendLease(job!, 60_000)).toBe(true);
        await subject.advance(1_100);
        expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toEqual([]);
        expect(await queue.complete(job!)).toBe(true);
      });

      it('makes a job dead when its lease expires on its last attempt', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {}, { maxAttempts: 1 });
        await queue.claim(t, { limit: 1, leaseMs: 100 });
        await subject.advance(150);
        expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toEqual([]);
        const job = await mustGet(id);
        expect(job.state).toBe('dead');
        expect(job.lastError).toMatch(/lease expired/);
      });
    });

    describe('failure, retry and dead jobs', () => {
      it('schedules a failed attempt again after the given delay, keeping the error', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {}, { maxAttempts: 3 });
        const [job] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        const before = subject.now().getTime();
        expect(await queue.fail(job!, 'connection refused', 200)).toBe('retry');
        const stored = await mustGet(id);
        expect(stored).toMatchObject({ state: 'pending', attempts: 1, lastError: 'connection refused' });
        expect(stored.runAt.getTime()).toBeGreaterThanOrEqual(before + 200);
        expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toEqual([]);
        await subject.advance(250);
        const [retry] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        expect(retry).toMatchObject({ id, attempts: 2 });
      });

      it('makes a job dead after maxAttempts and lists it', async () => {
        const t = topic();
        const id = await queue.enqueue(t, { n: 1 }, { maxAttempts: 2 });
        for (const [i, outcome] of (['retry', 'dead'] as const).entries()) {
          const [job] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
          expect(await queue.fail(job!, `boom ${i + 1}`, 0)).toBe(outcome);
        }
        expect(await mustGet(id)).toMatchObject({ state: 'dead', attempts: 2, lastError: 'boom 2' });
        expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toEqual([]);
        expect((await queue.listDead({ topic: t })).map((j) => j.id)).toEqual([id]);
        expect((await queue.listDead({ limit: 1_000 })).some((j) => j.id === id)).toBe(true);
      });

      it('requeues a dead job as a fresh pending job', async () => {
        const t = topic();
        const id = await queue.enqueue(t, { n: 1 }, { maxAttempts: 1, dedupeKey: 'dk' });
        const [job] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        await queue.fail(job!, 'boom', 0);
        await queue.requeue(id);
        expect(await mustGet(id)).toMatchObject({ state: 'pending', attempts: 0, lastError: 'boom' });
        expect(await queue.listDead({ topic: t })).toEqual([]);
        expect(await queue.enqueue(t, {}, { dedupeKey: 'dk' })).toBe(id);
        const [again] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        expect(again).toMatchObject({ id, attempts: 1, payload: { n: 1 } });
      });

      it('refuses to requeue an unknown or a live job', async () => {
        const t = topic();
        expect(codeOf(await queue.requeue(`missing-${randomUUID()}`).catch((e: unknown) => e))).toBe(
          'not_found',
        );
        const id = await queue.enqueue(t, {});
        expect(codeOf(await queue.requeue(id).catch((e: unknown) => e))).toBe('conflict');
      });

      it('refuses to requeue a dead job whose dedupe key another job now holds', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {}, { maxAttempts: 1, dedupeKey: 'dk' });
        const [job] = await queue.claim(t, { limit: 1, leaseMs: 60_000 });
        await queue.fail(job!, 'boom', 0);
        const successor = await queue.enqueue(t, {}, { dedupeKey: 'dk' });
        expect(successor).not.toBe(id);
        expect(codeOf(await queue.requeue(id).catch((e: unknown) => e))).toBe('conflict');
        expect((await mustGet(id)).state).toBe('dead');
      });
    });

    describe('workers', () => {
      it('handles each of 200 jobs exactly once with 20 concurrent workers', async () => {
        const t = topic();
        const ids: string[] = [];
        for (let i = 0; i < 200; i++) ids.push(await queue.enqueue(t, { i }));
        const handled = new Map<string, number>();
        for (let w = 0; w < 20; w++) {
          workers.push(
            queue.work(
              t,
              async (_payload, { job }) => {
                handled.set(job.id, (handled.get(job.id) ?? 0) + 1);
                // Yield so that handlers of different workers genuinely overlap.
                await new Promise((resolve) => setTimeout(resolve, 1));
              },
              { concurrency: 3, leaseMs: 60_000, pollIntervalMs: 10 },
            ),
          );
        }
        await eventually(async () => handled.size === 200);
        await Promise.all(workers.splice(0).map((w) => w.stop()));
        expect([...handled.values()].every((n) => n === 1)).toBe(true);
        expect(new Set(handled.keys())).toEqual(new Set(ids));
        for (const id of ids) expect((await mustGet(id)).state).toBe('completed');
      }, 60_000); // a liveness bound on a loaded machine, not a timing assertion

      it('retries a throwing handler with backoff and marks the job dead with the last error', async () => {
        const t = topic();
        const id = await queue.enqueue(t, { n: 1 }, { maxAttempts: 3 });
        const attempts: number[] = [];
        workers.push(
          queue.work(
            t,
            async (_payload, { job }) => {
              attempts.push(job.attempts);
              throw new Error(`boom ${job.attempts}`);
            },
            { concurrency: 1, leaseMs: 60_000, pollIntervalMs: 10, backoff: { baseMs: 300, factor: 2 } },
          ),
        );
        await eventually(async () => attempts.length === 1);
        // Between attempts the job waits out its backoff as a pending job.
        let between: QueueJob | undefined;
        await eventually(async () => {
          between = await mustGet(id);
          return between.state === 'pending';
        });
        expect(between?.lastError).toBe('boom 1');
        await eventually(async () => (await mustGet(id)).state === 'dead', {
          onEachPoll: () => subject.advance(50),
        });
        expect(attempts).toEqual([1, 2, 3]);
        expect(await mustGet(id)).toMatchObject({ state: 'dead', attempts: 3, lastError: 'boom 3' });
        expect((await queue.listDead({ topic: t })).map((j) => j.id)).toEqual([id]);
      });

      it('runs a requeued dead job again', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {}, { maxAttempts: 1 });
        let shouldFail = true;
        let runs = 0;
        workers.push(
          queue.work(
            t,
            async () => {
              runs += 1;
              if (shouldFail) throw new Error('first run fails');
            },
            { concurrency: 1, leaseMs: 60_000, pollIntervalMs: 10 },
          ),
        );
        await eventually(async () => (await mustGet(id)).state === 'dead');
        shouldFail = false;
        await queue.requeue(id);
        await eventually(async () => (await mustGet(id)).state === 'completed');
        expect(runs).toBe(2);
      });

      it('never runs more handlers at once than its concurrency', async () => {
        const t = topic();
        for (let i = 0; i < 12; i++) await queue.enqueue(t, { i });
        let running = 0;
        let peak = 0;
        let done = 0;
        workers.push(
          queue.work(
            t,
            async () => {
              running += 1;
              peak = Math.max(peak, running);
              await new Promise((resolve) => setTimeout(resolve, 5));
              running -= 1;
              done += 1;
            },
            { concurrency: 4, leaseMs: 60_000, pollIntervalMs: 10 },
          ),
        );
        await eventually(async () => done === 12);
        expect(peak).toBeLessThanOrEqual(4);
        expect(peak).toBeGreaterThan(1);
      });

      it('keeps extending the lease of a handler that runs longer than leaseMs', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {});
        let release!: () => void;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        let started = false;
        workers.push(
          queue.work(
            t,
            async () => {
              started = true;
              await gate;
            },
            // Heartbeats every 500 ms real time; each pass below lets 500 ms pass on the queue's
            // clock and then waits long enough for a heartbeat, so the lease never runs out.
            { concurrency: 1, leaseMs: 1_500, pollIntervalMs: 10 },
          ),
        );
        await eventually(async () => started);
        for (let pass = 0; pass < 3; pass++) {
          await subject.advance(500);
          await new Promise((resolve) => setTimeout(resolve, 700));
          expect(await queue.claim(t, { limit: 1, leaseMs: 60_000 })).toEqual([]);
        }
        release();
        await eventually(async () => (await mustGet(id)).state === 'completed');
        expect((await mustGet(id)).attempts).toBe(1);
      });

      it('stop() signals in-flight handlers and waits for them to finish', async () => {
        const t = topic();
        const id = await queue.enqueue(t, {});
        let release!: () => void;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        let started = false;
        let sawAbort = false;
        const worker = queue.work(
          t,
          async (_payload, { signal }) => {
            started = true;
            await gate;
            sawAbort = signal.aborted;
          },
          { concurrency: 1, leaseMs: 60_000, pollIntervalMs: 10 },
        );
        await eventually(async () => started);
        let stopped = false;
        const stopping = worker.stop().then(() => {
          stopped = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(stopped).toBe(false);
        release();
        await stopping;
        expect(sawAbort).toBe(true);
        expect((await mustGet(id)).state).toBe('completed');
        // A stopped worker claims nothing more.
        const later = await queue.enqueue(t, {});
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect((await mustGet(later)).state).toBe('pending');
      });
    });
  });
}
