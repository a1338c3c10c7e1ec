import {
  type EphemeralStore,
  isCertwrightError,
  type Logger,
  MemoryEphemeralStore,
  type Queue,
  type ServiceConfig,
} from '@certwright/core';
import { connectRedis, RedisEphemeralStore, RedisQueue } from '@certwright/queue-redis';
import { type OpenedStorage, openStorage } from './storage.js';

export type DependencyCheck = () => Promise<{ ok: boolean; detail?: string }>;

/** The stateful parts of one server process: database, queue, ephemeral store. */
export interface Runtime {
  opened: OpenedStorage;
  queue: Queue;
  ephemeral: EphemeralStore;
  /** One check per dependency, for /ready. */
  checks: Record<string, DependencyCheck>;
  close(): Promise<void>;
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15_000;

/**
 * Opens storage (migrating and seeding it) and, with SVC_REDIS_URL, Redis. A database that is
 * not reachable yet is retried with backoff until `stopped()` says to give up; any other
 * failure (a corrupt data directory, a failed migration) is final.
 */
export async function openRuntime(
  config: Readonly<ServiceConfig>,
  logger: Logger,
  stopped: () => boolean,
): Promise<Runtime> {
  const opened = await retryWhileUnavailable(() => openStorage(config, logger), logger, stopped);
  if (!config.redisUrl) {
    return {
      opened,
      queue: opened.queue,
      ephemeral: new MemoryEphemeralStore(),
      checks: { storage: () => opened.check() },
      close: () => opened.close(),
    };
  }
  try {
    const client = await retryWhileUnavailable(
      () => connectRedis({ url: config.redisUrl as string, logger }),
      logger,
      stopped,
    );
    return {
      opened,
      queue: new RedisQueue(client),
      ephemeral: new RedisEphemeralStore(client),
      checks: {
        storage: () => opened.check(),
        redis: async () => {
          try {
            await client.ping();
            return { ok: true };
          } catch (error) {
            return { ok: false, detail: isCertwrightError(error) ? error.code : 'unreachable' };
          }
        },
      },
      async close() {
        await client.close().catch(() => {});
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close().catch(() => {});
    throw error;
  }
}

async function retryWhileUnavailable<T>(
  open: () => Promise<T>,
  logger: Logger,
  stopped: () => boolean,
): Promise<T> {
  let delay = RETRY_FIRST_MS;
  for (;;) {
    try {
      return await open();
    } catch (error) {
      if (!isCertwrightError(error) || error.code !== 'unavailable' || stopped()) throw error;
      logger.warn({ err: error.message, retry_in_ms: delay }, 'dependency not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }
}
