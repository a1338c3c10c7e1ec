import { readFileSync } from 'node:fs';
import {
  type EphemeralStore,
  fail,
  isCertwrightError,
  type KeyCustody,
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
  /** The PKCS#11 key custody, with SVC_PKCS11_MODULE. */
  keyCustody: KeyCustody | undefined;
  /** One check per dependency, for /ready. */
  checks: Record<string, DependencyCheck>;
  close(): Promise<void>;
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15_000;
/** /ready's Redis round trip gives up after this long. */
const REDIS_CHECK_TIMEOUT_MS = 2000;

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
  let keyCustody: KeyCustody | undefined;
  try {
    keyCustody = config.pkcs11
      ? await retryWhileUnavailable(() => openPkcs11(config, logger), logger, stopped)
      : undefined;
  } catch (error) {
    await opened.close().catch(() => {});
    throw error;
  }
  const custodyCheck: Record<string, DependencyCheck> = keyCustody
    ? {
        key_custody: async () =>
          (await keyCustody.ready()) ? { ok: true } : { ok: false, detail: 'token unavailable' },
      }
    : {};
  const closeCustody = async () => {
    await keyCustody?.close().catch(() => {});
  };
  if (!config.redisUrl) {
    return {
      opened,
      queue: opened.queue,
      ephemeral: new MemoryEphemeralStore(),
      keyCustody,
      checks: { storage: () => opened.check(), ...custodyCheck },
      async close() {
        await closeCustody();
        await opened.close();
      },
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
      keyCustody,
      checks: {
        ...custodyCheck,
        storage: () => opened.check(),
        redis: async () => {
          // Bounded like the storage check: a Redis that accepts the connection but never
          // answers (stopped, overloaded) is reported as down instead of hanging /ready.
          let timer: NodeJS.Timeout | undefined;
          try {
            await Promise.race([
              client.ping(),
              new Promise<never>((_, reject) => {
                timer = setTimeout(() => reject(new Error('timeout')), REDIS_CHECK_TIMEOUT_MS);
              }),
            ]);
            return { ok: true };
          } catch (error) {
            return { ok: false, detail: isCertwrightError(error) ? error.code : 'unreachable' };
          } finally {
            clearTimeout(timer);
          }
        },
      },
      async close() {
        await client.close().catch(() => {});
        await closeCustody();
        await opened.close();
      },
    };
  } catch (error) {
    await closeCustody();
    await opened.close().catch(() => {});
    throw error;
  }
}

/**
 * The PKCS#11 package, loaded only when a token is configured: its binding (pkcs11js) is a native
 * addon built by an install script, which pnpm skips unless allowed, so a server without a token
 * must start without it.
 */
async function loadPkcs11(logger: Logger): Promise<typeof import('@certwright/key-custody-pkcs11')> {
  try {
    return await import('@certwright/key-custody-pkcs11');
  } catch (error) {
    logger.error({ err: error }, 'the PKCS#11 binding failed to load');
    throw fail(
      'config_invalid',
      'SVC_PKCS11_MODULE is set, but the PKCS#11 binding (pkcs11js) is not built: allow its install script and reinstall',
    );
  }
}

/** Opens the token custody; the PIN comes from its file at each open (a rotated PIN is picked up). */
async function openPkcs11(config: Readonly<ServiceConfig>, logger: Logger): Promise<KeyCustody> {
  const { Pkcs11KeyCustody } = await loadPkcs11(logger);
  const c = config.pkcs11!;
  let pin = c.pin;
  if (c.pinFile) {
    try {
      pin = readFileSync(c.pinFile, 'utf8').replace(/\r?\n$/, '');
    } catch {
      throw fail('config_invalid', 'SVC_PKCS11_PIN_FILE cannot be read');
    }
  }
  const custody = Pkcs11KeyCustody.open(
    { module: c.module, tokenLabel: c.tokenLabel, pin: pin ?? '' },
    { logger },
  );
  logger.info({ token: c.tokenLabel }, 'PKCS#11 key custody ready');
  return custody;
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
