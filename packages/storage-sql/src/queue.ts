import {
  assertEnqueueOptions,
  CertwrightError,
  type ClaimedJob,
  type ClaimOptions,
  type Clock,
  DEFAULT_MAX_ATTEMPTS,
  type EnqueueOptions,
  type FailOutcome,
  isCertwrightError,
  type JobHandler,
  type ListDeadOptions,
  type Queue,
  type QueueJob,
  type QueueJobState,
  type QueueWorker,
  runQueueWorker,
  systemClock,
  type WorkOptions,
} from '@certwright/core';
import type { Kysely, Selectable } from 'kysely';
import { toNum } from './context.js';
import { retryOnDeadlock } from './errors.js';
import type { Database, QueueJobsTable } from './schema.js';

const LEASE_EXPIRED = 'lease expired';

function toJob<P>(r: Selectable<QueueJobsTable>): QueueJob<P> {
  const job: QueueJob<P> = {
    id: r.id,
    topic: r.topic,
    payload: JSON.parse(r.payload) as P,
    state: r.state as QueueJobState,
    attempts: toNum(r.attempts),
    maxAttempts: toNum(r.max_attempts),
    runAt: r.run_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  if (r.dedupe_key !== null) job.dedupeKey = r.dedupe_key;
  if (r.last_error !== null) job.lastError = r.last_error;
  if (r.lease_expires_at !== null && r.state === 'running') job.leaseExpiresAt = r.lease_expires_at;
  return job;
}

// Length-prefixed so no (topic, key) pair can collide with another; text without NUL for PostgreSQL.
const activeKey = (topic: string, key: string) => `${topic.length}:${topic}:${key}`;

/**
 * The Queue port on the certwright database (PGlite, PostgreSQL, MySQL/MariaDB). Claims use
 * `FOR UPDATE SKIP LOCKED`, so any number of workers in any number of processes share a topic
 * and never receive the same delivery. "Unique while active" de-duplication is a unique column
 * that holds topic + key only while the job is pending or running.
 */
export class SqlQueue implements Queue {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, options: { clock?: Clock } = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
  }

  async enqueue<P>(topic: string, payload: P, options: EnqueueOptions = {}): Promise<string> {
    assertEnqueueOptions(topic, options);
    const text = JSON.stringify(payload);
    if (text === undefined)
      throw new CertwrightError('bad_request', 'queue payload must be JSON-serializable');
    const now = this.#clock.now();
    const runAt = options.runAt && options.runAt > now ? options.runAt : now;
    const id = `q-${globalThis.crypto.randomUUID()}`;
    const dedupe = options.dedupeKey === undefined ? null : activeKey(topic, options.dedupeKey);
    // A holder of the key may finish between our failed insert and the lookup; try again then.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        await this.#db
          .insertInto('queue_jobs')
          .values({
            id,
            topic,
            payload: text,
            state: 'pending',
            attempts: 0,
            max_attempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
            run_at: runAt,
            dedupe_key: options.dedupeKey ?? null,
            dedupe_active: dedupe,
            last_error: null,
            lease_id: null,
            lease_expires_at: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
        return id;
      } catch (error) {
        if (!(dedupe !== null && isCertwrightError(error) && error.code === 'conflict')) throw error;
        const holder = await this.#db
          .selectFrom('queue_jobs')
          .select('id')
          .where('dedupe_active', '=', dedupe)
          .executeTakeFirst();
        if (holder) return holder.id;
      }
    }
    throw new CertwrightError(
      'conflict',
      `could not enqueue on '${topic}': de-duplication key keeps changing hands`,
    );
  }

  work<P>(topic: string, handler: JobHandler<P>, options: WorkOptions): QueueWorker {
    return runQueueWorker(this, topic, handler, options);
  }

  async get<P = unknown>(id: string): Promise<QueueJob<P> | undefined> {
    const r = await this.#db.selectFrom('queue_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toJob<P>(r) : undefined;
  }

  async listDead(options: ListDeadOptions = {}): Promise<QueueJob[]> {
    let q = this.#db.selectFrom('queue_jobs').selectAll().where('state', '=', 'dead');
    if (options.topic !== undefined) q = q.where('topic', '=', options.topic);
    const rows = await q
      .orderBy('updated_at', 'desc')
      .orderBy('id')
      .limit(options.limit ?? 100)
      .execute();
    return rows.map((r) => toJob(r));
  }

  async requeue(id: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .selectFrom('queue_jobs')
        .selectAll()
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!r) throw new CertwrightError('not_found', `queue job '${id}' does not exist`);
      if (r.state !== 'dead')
        throw new CertwrightError('conflict', `queue job '${id}' is ${r.state}, not dead`);
      const now = this.#clock.now();
      await trx
        .updateTable('queue_jobs')
        .set({
          state: 'pending',
          attempts: 0,
          run_at: now,
          dedupe_active: r.dedupe_key === null ? null : activeKey(r.topic, r.dedupe_key),
          lease_id: null,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
    });
  }

  async claim<P = unknown>(topic: string, options: ClaimOptions): Promise<ClaimedJob<P>[]> {
    if (!(options.limit >= 1) || !(options.leaseMs > 0)) {
      throw new CertwrightError('bad_request', 'claim needs limit ≥ 1 and leaseMs > 0');
    }
    // READ COMMITTED: no gap locks on InnoDB, so claimers contend only for the rows they take.
    return retryOnDeadlock(() =>
      this.#db
        .transaction()
        .setIsolationLevel('read committed')
        .execute(async (trx) => {
          const now = this.#clock.now();
          // Deliveries whose worker vanished: back to pending, or dead when out of attempts.
          const expired = await trx
            .selectFrom('queue_jobs')
            .select(['id', 'attempts', 'max_attempts'])
            .where('topic', '=', topic)
            .where('state', '=', 'running')
            .where('lease_expires_at', '<=', now)
            .forUpdate()
            .skipLocked()
            .execute();
          for (const e of expired) {
            const dead = toNum(e.attempts) >= toNum(e.max_attempts);
            await trx
              .updateTable('queue_jobs')
              .set({
                state: dead ? 'dead' : 'pending',
                run_at: now,
                last_error: LEASE_EXPIRED,
                lease_id: null,
                lease_expires_at: null,
                updated_at: now,
                ...(dead ? { dedupe_active: null } : {}),
              })
              .where('id', '=', e.id)
              .execute();
          }

          const due = await trx
            .selectFrom('queue_jobs')
            .select('id')
            .where('topic', '=', topic)
            .where('state', '=', 'pending')
            .where('run_at', '<=', now)
            .orderBy('run_at')
            .orderBy('id')
            .limit(options.limit)
            .forUpdate()
            .skipLocked()
            .execute();
          const ids = due.map((r) => r.id);
          if (ids.length === 0) return [];
          const leaseId = globalThis.crypto.randomUUID();
          const leaseExpiresAt = new Date(now.getTime() + options.leaseMs);
          await trx
            .updateTable('queue_jobs')
            .set((eb) => ({
              state: 'running',
              attempts: eb('attempts', '+', 1),
              lease_id: leaseId,
              lease_expires_at: leaseExpiresAt,
              updated_at: now,
            }))
            .where('id', 'in', ids)
            .execute();
          const rows = await trx
            .selectFrom('queue_jobs')
            .selectAll()
            .where('id', 'in', ids)
            .orderBy('run_at')
            .orderBy('id')
            .execute();
          return rows.map((r) => ({ ...toJob<P>(r), state: 'running' as const, leaseId, leaseExpiresAt }));
        }),
    );
  }

  async complete(job: Pick<ClaimedJob, 'id' | 'leaseId'>): Promise<boolean> {
    const now = this.#clock.now();
    const res = await this.#db
      .updateTable('queue_jobs')
      .set({
        state: 'completed',
        dedupe_active: null,
        lease_id: null,
        lease_expires_at: null,
        updated_at: now,
      })
      .where('id', '=', job.id)
      .where('lease_id', '=', job.leaseId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async fail(
    job: Pick<ClaimedJob, 'id' | 'leaseId'>,
    error: string,
    retryDelayMs: number,
  ): Promise<FailOutcome> {
    return this.#db.transaction().execute(async (trx) => {
      const r = await trx
        .selectFrom('queue_jobs')
        .select(['attempts', 'max_attempts'])
        .where('id', '=', job.id)
        .where('lease_id', '=', job.leaseId)
        .where('state', '=', 'running')
        .forUpdate()
        .executeTakeFirst();
      if (!r) return 'lost';
      const now = this.#clock.now();
      const dead = toNum(r.attempts) >= toNum(r.max_attempts);
      await trx
        .updateTable('queue_jobs')
        .set({
          state: dead ? 'dead' : 'pending',
          run_at: dead ? now : new Date(now.getTime() + Math.max(0, retryDelayMs)),
          last_error: error.slice(0, 10_000),
          lease_id: null,
          lease_expires_at: null,
          updated_at: now,
          ...(dead ? { dedupe_active: null } : {}),
        })
        .where('id', '=', job.id)
        .execute();
      return dead ? 'dead' : 'retry';
    });
  }

  async extendLease(job: Pick<ClaimedJob, 'id' | 'leaseId'>, leaseMs: number): Promise<boolean> {
    const now = this.#clock.now();
    const res = await this.#db
      .updateTable('queue_jobs')
      .set({ lease_expires_at: new Date(now.getTime() + leaseMs), updated_at: now })
      .where('id', '=', job.id)
      .where('lease_id', '=', job.leaseId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Deletes completed jobs last updated before `before` (retention); returns how many. */
  async purgeCompleted(before: Date): Promise<number> {
    const res = await this.#db
      .deleteFrom('queue_jobs')
      .where('state', '=', 'completed')
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
