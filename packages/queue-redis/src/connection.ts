import { createHash } from 'node:crypto';
import { CertwrightError, isCertwrightError, type Logger, redactUrl, silentLogger } from '@certwright/core';
import { createClient, ErrorReply, type RedisClientType } from 'redis';

/** The node-redis client type this package works with (default modules, RESP2). */
export type RedisClient = RedisClientType;

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. Logged only with the password redacted. */
  url: string;
  logger?: Logger;
  /** Give up a connection attempt after this long. Default 5,000 ms. */
  connectTimeoutMs?: number;
  /** Upper bound of the delay between reconnection attempts. Default 2,000 ms. */
  maxReconnectDelayMs?: number;
}

/**
 * Creates and connects a node-redis client set up the way the queue and ephemeral store need:
 *
 * - the offline queue is disabled, so while the connection is down commands fail at once (and
 *   surface as `unavailable`) instead of piling up in memory and running much later — a nonce
 *   consumed or a lease taken minutes late would be wrong;
 * - it reconnects forever with capped backoff, so it recovers by itself when Redis returns;
 * - connection errors are logged once per outage, with the URL's password redacted.
 *
 * Rejects with `unavailable` if the first connection cannot be made within `connectTimeoutMs`.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<RedisClient> {
  const logger = (options.logger ?? silentLogger).child({ redis: redactUrl(options.url) });
  const maxDelay = options.maxReconnectDelayMs ?? 2_000;
  const client: RedisClient = createClient({
    url: options.url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 5_000,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 10), maxDelay),
    },
  });
  let down = false;
  client.on('error', (error: unknown) => {
    // node-redis emits an error for every failed reconnect attempt; one line per outage is enough.
    if (down) return;
    down = true;
    logger.warn({ err: describeError(error) }, 'redis connection lost; reconnecting');
  });
  client.on('ready', () => {
    if (down) logger.info({}, 'redis connection restored');
    down = false;
  });
  try {
    await withTimeout(client.connect(), (options.connectTimeoutMs ?? 5_000) + 1_000);
  } catch (error) {
    client.destroy();
    throw new CertwrightError('unavailable', `cannot connect to redis at ${redactUrl(options.url)}`, {
      cause: error,
    });
  }
  return client;
}

/** Error message without anything that might embed the URL (node-redis errors do not, but be sure). */
function describeError(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return message.replace(/\/\/[^@/\s]*@/g, '//***@');
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Maps a failure of a Redis call to a CertwrightError. An error *reply* means Redis answered
 * (a script bug, a wrong key type): that is `internal`. Everything else — socket closed mid
 * command, client offline while reconnecting, timeouts — means Redis is out of reach: `unavailable`.
 */
export function toCertwrightError(error: unknown, operation: string): CertwrightError {
  if (isCertwrightError(error)) return error;
  if (error instanceof ErrorReply) {
    return new CertwrightError('internal', `redis rejected ${operation}`, { cause: error });
  }
  return new CertwrightError('unavailable', `redis is unavailable (${operation})`, { cause: error });
}

/** Runs `fn`, translating Redis failures (see {@link toCertwrightError}). */
export async function guarded<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toCertwrightError(error, operation);
  }
}

/**
 * A Lua script run by SHA, loading it on first use or after a Redis restart (NOSCRIPT). The
 * scripts are what make multi-key updates atomic: Redis runs a script without interleaving.
 */
export class LuaScript {
  readonly #source: string;
  readonly #sha: string;

  constructor(source: string) {
    this.#source = source;
    this.#sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    const options = { keys, arguments: args.map(String) };
    try {
      return await client.evalSha(this.#sha, options);
    } catch (error) {
      if (error instanceof ErrorReply && error.message.startsWith('NOSCRIPT')) {
        return await client.eval(this.#source, options);
      }
      throw error;
    }
  }
}

/** Lua prelude: the Redis server's clock in milliseconds, the one time source of all instances. */
export const LUA_NOW = `
local __t = redis.call('TIME')
local now = tonumber(__t[1]) * 1000 + math.floor(tonumber(__t[2]) / 1000)
`;
