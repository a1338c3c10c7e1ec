import { readFileSync } from 'node:fs';
import {
  CertwrightError,
  type EphemeralStore,
  fail,
  isCertwrightError,
  type KeyCustody,
  type Logger,
  MemoryEphemeralStore,
  type Queue,
} from '@certwright/core';
import { connectRedis, RedisEphemeralStore, RedisQueue } from '@certwright/queue-redis';
import type { ServiceConfig } from './config.js';
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
  const opened = await retryWhileUnavailable(() => openStorage(config, logger), logger, stopped, {
    dependency: config.databaseUrl ? databaseTarget(config.databaseUrl) : 'the embedded database',
    // At start-up a database that refuses these credentials or does not exist yet is often one
    // still being provisioned: waited out like one that is down, its cause logged each time.
    retryAlso: (cause) => cause !== undefined && START_UP_RETRYABLE.has(cause.code),
  });
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

/** PostgreSQL: invalid password, no such role, no such database; MySQL: access denied, no such database. */
const START_UP_RETRYABLE = new Set(['28P01', '28000', '3D000', 'ER_ACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR']);

interface Cause {
  code: string;
  message: string;
}

/** The driver's own error under our typed one: its code (SQLSTATE, errno name, ECONNREFUSED) and text. */
export function rootCause(error: unknown): Cause | undefined {
  for (
    let e: unknown = error, depth = 0;
    e instanceof Error && depth < 5;
    e = (e as Error).cause, depth += 1
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && !isCertwrightError(e)) return { code, message: e.message };
    // AggregateError (a host with several addresses): the first attempt's cause.
    if (e instanceof AggregateError && e.errors[0] instanceof Error) e = e.errors[0];
  }
  return undefined;
}

/** `host:port/name` of a database URL: enough to find it, never its credentials. */
export function databaseTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'mysql:' ? '3306' : '5432');
    return `${parsed.hostname}:${port}${parsed.pathname}`;
  } catch {
    return 'SVC_DATABASE_URL';
  }
}

async function retryWhileUnavailable<T>(
  open: () => Promise<T>,
  logger: Logger,
  stopped: () => boolean,
  about: { dependency?: string; retryAlso?: (cause: Cause | undefined) => boolean } = {},
): Promise<T> {
  let delay = RETRY_FIRST_MS;
  for (;;) {
    try {
      return await open();
    } catch (error) {
      const cause = rootCause(error);
      const where = about.dependency ? { dependency: about.dependency } : {};
      const why = cause ? { cause: `${cause.code}: ${cause.message}` } : {};
      const retryable =
        isCertwrightError(error) && (error.code === 'unavailable' || about.retryAlso?.(cause) === true);
      if (!retryable || stopped()) {
        if (!isCertwrightError(error) || !about.dependency) throw error;
        throw new CertwrightError(
          error.code,
          `${about.dependency}: ${error.message}${cause ? ` (${cause.code}: ${cause.message})` : ''}`,
          { cause: error },
        );
      }
      logger.warn(
        { err: error.message, ...where, ...why, retry_in_ms: delay },
        'dependency not reachable yet; retrying',
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }
}
