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
 *   rolled back and the other bodies of the batch run again without it in a new transaction
 *   (a body may therefore run more than once; only its last run, the committed one, counts —
 *   bodies write through `tx` only, whose effects a rollback undoes);
 * - a commit that fails rejects every caller of that batch.
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

  async #commit(batch: Pending[]): Promise<void> {
    let pending = batch;
    while (pending.length > 0) {
      const results: unknown[] = [];
      let failed = -1;
      let failure: unknown;
      try {
        await this.storage.transaction(async (tx) => {
          for (let i = 0; i < pending.length; i++) {
            try {
              results.push(await pending[i]!.body(tx));
            } catch (error) {
              failed = i;
              failure = error;
              throw error;
            }
          }
        });
      } catch (error) {
        if (failed < 0) {
          // The commit (or the begin) failed: nothing of the batch is stored.
          for (const p of pending) p.reject(error);
          return;
        }
        pending[failed]!.reject(failure);
        pending = pending.filter((_, i) => i !== failed);
        continue;
      }
      for (let i = 0; i < pending.length; i++) pending[i]!.resolve(results[i]);
      return;
    }
  }
}

interface Pending {
  body: (tx: Storage) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
