import type { EphemeralStore, Logger } from '@certwright/core';
import type { SqlStorage } from '@certwright/storage-sql';
import { type LeasedTask, startLeasedTask, type TickObserver } from './lease-runner.js';

/** Default tick of the background re-seal while SVC_ENCRYPTION_KEY_PREVIOUS is set. */
export const REKEY_INTERVAL_MS = 10_000;
/** Batches per tick: bounds how long one tick holds the lease and the database. */
const BATCHES_PER_TICK = 20;

/**
 * The background re-seal (docs/operations/key-rotation.md): while the keyring has previous keys,
 * one instance per tick re-seals up to 20 batches under the current key, resuming from the stored
 * progress, until the run has finished; after that a tick only reads the progress. Logs progress
 * at info and the end once.
 */
export function startRekeyJob(options: {
  storage: SqlStorage;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** Told of every tick (the server's scheduler metrics). */
  onTick?: TickObserver;
  holder: string;
  intervalMs?: number;
}): LeasedTask | undefined {
  if (options.storage.keyring.previousKeyIds.length === 0) return undefined;
  const log = options.logger.child({ scheduler: 'rekey' });
  let reported = false;
  return startLeasedTask({
    name: 'scheduler:rekey',
    holder: options.holder,
    intervalMs: options.intervalMs ?? REKEY_INTERVAL_MS,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    async run() {
      if (reported) return { finished: true };
      const result = await options.storage.rekey({
        maxBatches: BATCHES_PER_TICK,
        actor: 'rekey-job',
        onProgress: (p) =>
          log.info({ resealed: p.resealed, total: p.total, pass: p.pass }, 'encryption key re-seal progress'),
      });
      if (result.finished) {
        reported = true;
        log.info(
          {
            key_id: result.progress.key_id,
            resealed: result.progress.resealed,
            retired_key_ids: result.retiredKeyIds,
          },
          'encryption key re-seal finished: SVC_ENCRYPTION_KEY_PREVIOUS may be removed',
        );
      } else if (result.progress.failures.length > 0) {
        log.warn(
          { failures: result.progress.failures },
          'encryption key re-seal: values that no key of the ring opens are left as they are',
        );
      }
      return { finished: result.finished, resealed: result.progress.resealed };
    },
  });
}
