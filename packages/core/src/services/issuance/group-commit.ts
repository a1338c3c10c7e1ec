import { isCertwrightError } from '../../errors.js';
import type { Storage } from '../../ports/storage.js';

/**
 * Group commit for issuance writes. Every issuance appends to the audit hash chain, whose head
 * row is locked from the append until the commit, so concurrent issuances commit one after
 * another no matter how many connections there are. `run` therefore queues the caller's
 * transaction body and runs the bodies that queued meanwhile one after another in ONE
 * transaction: one begin, one commit (one WAL flush), one wait for the head lock for the lot.
 *
 * Semantics are those of running each body in its own transaction, in queue order:
 * - a caller's promise settles only after the transaction holding its body committed (or
 *   failed): no write is acknowledged before it is durable;
 * - a body that throws rejects its caller with that error and writes nothing; the transaction is
 *   rolled back, the bodies queued before it are stored without it, it runs once more alone (a
 *   failure may come from another body's rows that the storage wrote late, see `#commit`) and
 *   the bodies after it follow. A body may therefore run more than once; only its last run, the
 *   committed one, counts — bodies write through `tx` only, whose effects a rollback undoes;
 * - a commit that fails because the database is unavailable rejects every caller of that batch;
 *   any other failed commit is retried one body per transaction, so only the body at fault fails.
 *
 * Without concurrency a batch holds one body and nothing waits: the first caller starts a
 * transaction at once, and callers arriving while it runs form the next batch.
 */
export class GroupCommit {
  readonly #queue: Pending[] = [];
  #running = false;

  constructor(
    private readonly storage: Storage,
    /** Bodies per transaction at most: bounds how long one transaction holds its locks. */
    readonly maxBatch = 64,
  ) {}

  run<T>(body: (tx: Storage) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ body, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) await this.#commit(this.#queue.splice(0, this.maxBatch));
    } finally {
      this.#running = false;
    }
  }

  /**
   * Stores `batch` in one transaction. Storage may write some rows of a body later in the
   * transaction than the body's own call (storage-sql's deferred inserts: at the next call or at
   * the commit), so a failure that shows while another body runs, or at the commit, is not
   * necessarily that body's: the bodies concerned run again alone, and a body is rejected only
   * by a failure of its own transaction, as if every body had had one.
   */
  async #commit(batch: Pending[]): Promise<void> {
    const outcome = await this.#attempt(batch);
    if (outcome.ok) {
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(outcome.results[i]);
      return;
    }
    if (batch.length === 1) {
      batch[0]!.reject(outcome.error);
      return;
    }
    if (outcome.failed < 0) {
      // The begin or the commit failed. With the database unavailable every body would fail
      // alone too, only later: all are rejected now. Otherwise a row of any body may be at fault.
      if (isCertwrightError(outcome.error) && outcome.error.reason === 'unavailable') {
        for (const p of batch) p.reject(outcome.error);
        return;
      }
      for (const p of batch) await this.#commit([p]);
      return;
    }
    // The bodies before the failing one ran: they are stored first, in queue order; the failing
    // one then runs alone (its failure may have been an earlier body's row), then the rest.
    const failed = outcome.failed;
    if (failed > 0) await this.#commit(batch.slice(0, failed));
    await this.#commit([batch[failed]!]);
    if (failed + 1 < batch.length) await this.#commit(batch.slice(failed + 1));
  }

  /** Runs the bodies in one transaction; `failed` is the body that threw, -1 for the begin or commit. */
  async #attempt(batch: Pending[]): Promise<Attempt> {
    const results: unknown[] = [];
    let failed = -1;
    try {
      await this.storage.transaction(async (tx) => {
        for (let i = 0; i < batch.length; i++) {
          failed = i;
          results.push(await batch[i]!.body(tx));
        }
        failed = -1;
      });
      return { ok: true, results };
    } catch (error) {
      return { ok: false, failed, error };
    }
  }
}

type Attempt = { ok: true; results: unknown[] } | { ok: false; failed: number; error: unknown };

interface Pending {
  body: (tx: Storage) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
