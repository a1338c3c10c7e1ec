import { CertwrightError } from '../errors.js';
import { logAttemptFailure } from './attempt-log.js';
import { type Logger, silentLogger } from './logger.js';

/**
 * Life cycle of a queued job:
 *
 * ```
 *  enqueue ─▶ pending ──claim──▶ running ──handler ok──▶ completed
 *               ▲   ▲               │
 *               │   └─retry(backoff)┤ handler threw, attempts < maxAttempts
 *               │   └─lease expired─┤ (worker died), attempts < maxAttempts
 *               │                   └──────────────────▶ dead (attempts exhausted; lastError kept)
 *               └────────── requeue ◀──────────────────── dead
 * ```
 */
export type QueueJobState = 'pending' | 'running' | 'completed' | 'dead';

/** Default for {@link EnqueueOptions.maxAttempts}. */
export const DEFAULT_MAX_ATTEMPTS = 5;

export interface EnqueueOptions {
  /**
   * Earliest time the job may be claimed. Default: now. A time in the past makes the job due at
   * once (an implementation may store it as given or as now).
   */
  runAt?: Date;
  /**
   * De-duplication key, scoped to the topic. While a job with the same topic and key is
   * `pending` or `running`, `enqueue` creates nothing and returns that job's id (its payload,
   * runAt and maxAttempts are left unchanged). Once that job is `completed` or `dead`, the key
   * is free again and the next `enqueue` creates a new job.
   */
  dedupeKey?: string;
  /** Deliveries before the job goes `dead` (≥ 1). Default {@link DEFAULT_MAX_ATTEMPTS}. */
  maxAttempts?: number;
}

/** A job as stored. `payload` is whatever JSON value was enqueued (it round-trips through JSON). */
export interface QueueJob<P = unknown> {
  id: string;
  topic: string;
  payload: P;
  state: QueueJobState;
  /** Deliveries so far: incremented each time a worker claims the job. */
  attempts: number;
  maxAttempts: number;
  /** When the job becomes (or became) claimable. For `pending` jobs this includes any backoff. */
  runAt: Date;
  dedupeKey?: string;
  /** Message of the last failure (handler error or lease expiry); kept through requeue. */
  lastError?: string;
  /** Set while `running`: the claim is valid until then unless extended. */
  leaseExpiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A job handed to one worker. `leaseId` identifies this particular delivery: `complete`, `fail`
 * and `extendLease` succeed only while that delivery still holds the lease, so a worker that
 * stalled past its lease cannot overwrite the outcome of the delivery that replaced it.
 *
 * "Holds the lease" means: the job is `running` and its current lease id is this one. A lease
 * that has expired but that no claim has taken over yet is still held — recording the outcome
 * then is harmless and saves a needless re-delivery. Implementations must not rely on the lease
 * being unexpired, only on the id.
 */
export interface ClaimedJob<P = unknown> extends QueueJob<P> {
  state: 'running';
  leaseId: string;
  leaseExpiresAt: Date;
}

export interface ClaimOptions {
  /** Maximum number of jobs to claim (≥ 1). */
  limit: number;
  /** Lease length: the job is re-delivered if not completed, failed or extended within it. */
  leaseMs: number;
}

/** Outcome of {@link Queue.fail}: scheduled again, gone dead, or the lease was no longer ours. */
export type FailOutcome = 'retry' | 'dead' | 'lost';

/**
 * Exponential backoff between attempts: the delay after the n-th failed attempt (n ≥ 1) is
 * `min(maxMs, baseMs × factor^(n−1))`. Deterministic on purpose (no jitter) so schedules are
 * predictable; jobs of one topic are rarely synchronized enough for a thundering herd.
 */
export interface BackoffOptions {
  /** Default 1,000 ms. */
  baseMs?: number;
  /** Default 2. */
  factor?: number;
  /** Default 300,000 ms (5 minutes). */
  maxMs?: number;
}

export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 1_000;
  const factor = options.factor ?? 2;
  const max = options.maxMs ?? 300_000;
  return Math.min(max, base * factor ** Math.max(0, attempt - 1));
}

export interface JobContext<P = unknown> {
  /** The delivery being handled (attempt number is `job.attempts`, starting at 1). */
  job: ClaimedJob<P>;
  /**
   * Aborted when the worker is stopping or when this delivery lost its lease (it may then be
   * running elsewhere). Long handlers should watch it; the worker still waits for them.
   */
  signal: AbortSignal;
}

export type JobHandler<P = unknown> = (payload: P, context: JobContext<P>) => Promise<void>;

export interface WorkOptions {
  /** Maximum handlers running at once in this worker (≥ 1). */
  concurrency: number;
  /**
   * Lease per delivery. The worker extends the lease of running handlers every `leaseMs / 3`,
   * so a handler may run longer than `leaseMs`; only a worker that stops heart-beating (crashed,
   * frozen, partitioned) lets the lease expire and the job be re-delivered.
   */
  leaseMs: number;
  /** How long an idle worker waits before polling again. Default 1,000 ms. */
  pollIntervalMs?: number;
  backoff?: BackoffOptions;
  logger?: Logger;
}

export interface QueueWorker {
  /**
   * Stops claiming, aborts the handlers' signals and resolves once every in-flight handler has
   * finished and its outcome has been recorded. Calling it again returns the same promise.
   */
  stop(): Promise<void>;
}

export interface ListDeadOptions {
  /** Only this topic. Default: every topic. */
  topic?: string;
  /** Default 100. */
  limit?: number;
}

/**
 * Durable job queue (SQL by default, Redis for scale-out). Delivery is at-least-once: a job is
 * handled again if its worker dies before recording the outcome, so handlers must be
 * idempotent. Among live workers, a job is held by exactly one delivery at a time.
 *
 * Time: every implementation reads "now" from a single source (the injected `Clock`, or the
 * server's clock for Redis) so leases, runAt and backoff agree across instances.
 *
 * Errors: a backend that cannot be reached surfaces as `CertwrightError` code `unavailable`.
 */
export interface Queue {
  /**
   * Adds a job and returns its id; with a `dedupeKey` already held by a pending or running job
   * of the same topic, returns that job's id instead (see {@link EnqueueOptions.dedupeKey}).
   * `payload` must be JSON-serializable (`bad_request` otherwise, e.g. for `undefined`).
   */
  enqueue<P>(topic: string, payload: P, options?: EnqueueOptions): Promise<string>;

  /**
   * Starts a worker loop for one topic: claims due jobs up to `concurrency`, runs `handler`,
   * records completion, or on throw schedules a retry after `backoffDelay` of the attempt
   * number, or marks the job `dead` (keeping the error message) once `attempts` reaches
   * `maxAttempts`. Backend errors while polling are logged and retried; they do not stop it.
   */
  work<P>(topic: string, handler: JobHandler<P>, options: WorkOptions): QueueWorker;

  /** The job, or `undefined` if it never existed or its retention passed (completed jobs). */
  get<P = unknown>(id: string): Promise<QueueJob<P> | undefined>;

  /** Dead jobs, most recently dead first. */
  listDead(options?: ListDeadOptions): Promise<QueueJob[]>;

  /**
   * Moves a dead job back to `pending`, due now, with `attempts` reset to 0 (lastError kept).
   * Throws `not_found` for an unknown id, `conflict` if the job is not dead or if its dedupe key
   * is now held by another pending/running job.
   */
  requeue(id: string): Promise<void>;

  // Low-level delivery primitives. `work` is built on them (see runQueueWorker); they are
  // public so that other loop shapes (an agent's work poll, tests that simulate a crashed
  // worker) can use the same semantics.

  /**
   * Atomically claims up to `limit` due pending jobs of `topic` (runAt ≤ now; earliest runAt
   * first), moving them to `running` with a fresh lease and `attempts + 1`. Running jobs of the
   * topic whose lease has expired are first returned to `pending` (or made `dead`, with
   * lastError "lease expired", when their attempts are exhausted), so they are claimable
   * again. Concurrent claimers never receive the same delivery.
   */
  claim<P = unknown>(topic: string, options: ClaimOptions): Promise<ClaimedJob<P>[]>;

  /** Marks the delivery `completed`; `false` if it no longer holds the lease (nothing changes). */
  complete(job: Pick<ClaimedJob, 'id' | 'leaseId'>): Promise<boolean>;

  /**
   * Records a failed delivery: `dead` when `attempts ≥ maxAttempts`, otherwise `pending` again
   * with runAt = now + `retryDelayMs`. `lost` if the delivery no longer holds the lease.
   */
  fail(job: Pick<ClaimedJob, 'id' | 'leaseId'>, error: string, retryDelayMs: number): Promise<FailOutcome>;

  /** Pushes the lease to now + `leaseMs`; `false` if the delivery no longer holds the lease. */
  extendLease(job: Pick<ClaimedJob, 'id' | 'leaseId'>, leaseMs: number): Promise<boolean>;
}

/** Shared argument checks so every implementation rejects the same bad input the same way. */
export function assertEnqueueOptions(topic: string, options: EnqueueOptions | undefined): void {
  if (topic.length === 0) throw new CertwrightError('bad_request', 'queue topic must not be empty');
  const max = options?.maxAttempts;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
    throw new CertwrightError('bad_request', `maxAttempts must be a positive integer, got ${max}`);
  }
  if (options?.runAt && Number.isNaN(options.runAt.getTime())) {
    throw new CertwrightError('bad_request', 'runAt is not a valid date');
  }
}

function assertWorkOptions(options: WorkOptions): void {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new CertwrightError('bad_request', `concurrency must be a positive integer`);
  }
  if (!(options.leaseMs > 0)) throw new CertwrightError('bad_request', 'leaseMs must be positive');
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * The reference worker loop over a queue's delivery primitives; implementations return it from
 * `work()` so that every backend has identical worker semantics (see {@link Queue.work}).
 */
export function runQueueWorker<P>(
  queue: Pick<Queue, 'claim' | 'complete' | 'fail' | 'extendLease'>,
  topic: string,
  handler: JobHandler<P>,
  options: WorkOptions,
): QueueWorker {
  assertWorkOptions(options);
  const logger = (options.logger ?? silentLogger).child({ queue_topic: topic });
  const pollMs = options.pollIntervalMs ?? 1_000;
  const stopController = new AbortController();
  const inFlight = new Set<Promise<void>>();
  // Wakes the loop early when a slot frees up or stop() is called, instead of sleeping a full poll.
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopController.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const runOne = async (job: ClaimedJob<P>): Promise<void> => {
    const delivery = new AbortController();
    const onStop = () => delivery.abort(stopController.signal.reason);
    // A batch claimed just as stop() was called still runs (it holds leases), but told to wind down.
    if (stopController.signal.aborted) onStop();
    else stopController.signal.addEventListener('abort', onStop, { once: true });
    const heartbeat = setInterval(
      () => {
        queue.extendLease(job, options.leaseMs).then(
          (held) => {
            if (!held) delivery.abort(new CertwrightError('conflict', `lease on job ${job.id} was lost`));
          },
          (error: unknown) => logger.warn({ err: error, job_id: job.id }, 'could not extend job lease'),
        );
      },
      Math.max(1, Math.floor(options.leaseMs / 3)),
    );
    try {
      let failure: unknown;
      let failed = false;
      try {
        await handler(job.payload, { job, signal: delivery.signal });
      } catch (error) {
        failed = true;
        failure = error;
      }
      clearInterval(heartbeat);
      if (!failed) {
        if (!(await queue.complete(job)))
          logger.warn({ job_id: job.id }, 'job finished after losing its lease');
        return;
      }
      const delay = backoffDelay(job.attempts, options.backoff);
      const outcome = await queue.fail(job, errorMessage(failure), delay);
      // One line per attempt, no stack (the stack at debug): a job failing against a service
      // that is down fails alike on every attempt.
      logAttemptFailure(logger, {
        message: outcome === 'dead' ? 'job is dead after its last attempt' : 'job attempt failed',
        level: outcome === 'dead' ? 'error' : 'warn',
        attempt: job.attempts,
        maxAttempts: job.maxAttempts,
        nextRetryAt: outcome === 'retry' ? new Date(Date.now() + delay) : null,
        error: failure,
        fields: { job_id: job.id, outcome },
      });
    } catch (error) {
      // Recording the outcome failed (backend unreachable): the lease will expire and the job
      // will be delivered again, which is the at-least-once contract.
      logger.error({ err: error, job_id: job.id }, 'could not record job outcome');
    } finally {
      clearInterval(heartbeat);
      stopController.signal.removeEventListener('abort', onStop);
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopController.signal.aborted) {
      const free = options.concurrency - inFlight.size;
      if (free <= 0) {
        await pause(pollMs);
        continue;
      }
      let jobs: ClaimedJob<P>[];
      try {
        jobs = await queue.claim<P>(topic, { limit: free, leaseMs: options.leaseMs });
      } catch (error) {
        logger.warn({ err: error }, 'could not claim jobs; retrying');
        await pause(pollMs);
        continue;
      }
      for (const job of jobs) {
        const running = runOne(job).finally(() => {
          inFlight.delete(running);
          nudge();
        });
        inFlight.add(running);
      }
      // A full batch suggests more work is waiting: claim again at once.
      if (jobs.length < free) await pause(pollMs);
    }
  };

  const looping = loop();
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        stopController.abort(new CertwrightError('unavailable', 'queue worker is stopping'));
        nudge();
        await looping;
        await Promise.all([...inFlight]);
      })();
      return stopping;
    },
  };
}
