import { once } from 'node:events';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { isCertwrightError, type Logger } from '@certwright/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient, RedisEphemeralStore, RedisQueue } from '../src/index.js';
import { deletePrefix, REDIS_URL, runPrefix, sleep, testRedis } from './support.js';

/**
 * A TCP relay in front of the real Redis that the test can cut, stall and restore, to see what
 * callers observe when the connection is lost and when Redis comes back.
 */
class Relay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  port = 0;
  /** While set, bytes from clients are swallowed, so commands hang mid-flight. */
  stall = false;

  constructor(private readonly target: { host: string; port: number }) {
    this.#server = this.#create();
  }

  #create(): Server {
    return createServer((client) => {
      const upstream = tcpConnect(this.target);
      this.#sockets.add(client).add(upstream);
      client.on('data', (chunk) => {
        if (!this.stall) upstream.write(chunk);
      });
      upstream.pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.#sockets.delete(client);
        this.#sockets.delete(upstream);
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
  }

  async start(): Promise<void> {
    this.#server.listen(this.port, '127.0.0.1');
    await once(this.#server, 'listening');
    const address = this.#server.address();
    if (address && typeof address === 'object') this.port = address.port;
  }

  /** Stops accepting and drops every open connection, as if Redis had gone away. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await closed;
  }
}

function capturingLogger(lines: string[]): Logger {
  const log = (level: string) => (fields: object, message?: string) => {
    lines.push(JSON.stringify({ level, ...fields, message }));
  };
  const logger: Logger = {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (bindings) => {
      const child = capturingLogger(lines);
      const wrap = (fn: (fields: object, message?: string) => void) => (fields: object, message?: string) =>
        fn({ ...bindings, ...fields }, message);
      return {
        ...child,
        debug: wrap(child.debug),
        info: wrap(child.info),
        warn: wrap(child.warn),
        error: wrap(child.error),
      };
    },
  };
  return logger;
}

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error('condition not reached within the liveness bound');
    await sleep(25);
  }
}

const { client: direct, skip } = await testRedis();
const prefix = runPrefix('connection');

describe.skipIf(skip !== undefined)('Redis connection loss', () => {
  if (skip) console.warn(`[queue-redis] skipping connection-loss tests: ${skip}`);
  let relay: Relay;
  let client: RedisClient;
  const logLines: string[] = [];

  beforeAll(async () => {
    if (!direct) throw new Error(`Redis at ${REDIS_URL} is unreachable and SVC_TEST_REQUIRE_SERVICES=1`);
    const target = new URL(REDIS_URL);
    relay = new Relay({ host: target.hostname, port: Number(target.port || 6379) });
    await relay.start();
    // The default user of a test Redis has no password, so any password is accepted: that lets
    // us check that the one in the URL never reaches the logs.
    client = await connectRedis({
      url: `redis://default:s3cret-pw@127.0.0.1:${relay.port}`,
      logger: capturingLogger(logLines),
      maxReconnectDelayMs: 100,
    });
  });

  afterEach(async () => {
    relay.stall = false;
    if (!relay.port) return;
    // Bring the relay back if a test left it down.
    await relay.start().catch(() => {});
  });

  afterAll(async () => {
    client?.destroy();
    await relay?.cut();
    if (direct) {
      await deletePrefix(direct, prefix);
      direct.destroy();
    }
  });

  it('fails an operation in flight with unavailable, then recovers when Redis returns', async () => {
    const store = new RedisEphemeralStore(client, { prefix });
    expect(await store.putIfAbsent('survivor', 'kept', 60_000)).toBe(true);

    relay.stall = true;
    const inFlight = store.get('survivor').catch((e: unknown) => e);
    await sleep(50);
    await relay.cut();
    const error = await inFlight;
    expect(isCertwrightError(error) && error.code).toBe('unavailable');

    // While Redis is unreachable, calls fail fast instead of queueing up.
    const offline = await store.consume('survivor').catch((e: unknown) => e);
    expect(isCertwrightError(offline) && offline.code).toBe('unavailable');

    relay.stall = false;
    await relay.start();
    await eventually(async () => (await store.get('survivor')) === 'kept');
    expect(await store.consume('survivor')).toBe('kept');
  });

  it('keeps a worker alive through an outage and handles jobs once Redis is back', async () => {
    const queue = new RedisQueue(client, { prefix });
    const handled: string[] = [];
    const worker = queue.work<{ n: string }>(
      'outage',
      async (payload) => {
        handled.push(payload.n);
      },
      { concurrency: 2, leaseMs: 60_000, pollIntervalMs: 20, logger: capturingLogger(logLines) },
    );
    try {
      await queue.enqueue('outage', { n: 'before' });
      await eventually(async () => handled.includes('before'));

      await relay.cut();
      const error = await queue.enqueue('outage', { n: 'during' }).catch((e: unknown) => e);
      expect(isCertwrightError(error) && error.code).toBe('unavailable');
      await sleep(100); // let the worker poll against the outage

      await relay.start();
      await eventually(async () => {
        await queue.enqueue('outage', { n: 'after' }, { dedupeKey: 'after' });
        return true;
      });
      await eventually(async () => handled.includes('after'));
      expect(handled).not.toContain('during');
    } finally {
      await worker.stop();
    }
  });

  it('never logs the password of the Redis URL', () => {
    expect(logLines.some((line) => line.includes('redis connection lost'))).toBe(true);
    expect(logLines.join('\n')).not.toContain('s3cret-pw');
    expect(logLines.some((line) => line.includes('127.0.0.1'))).toBe(true);
  });
});

describe('connectRedis', () => {
  it('fails with unavailable, without the password, when Redis cannot be reached', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const error = await connectRedis({ url: 'redis://u:hunter22@127.0.0.1:1', connectTimeoutMs: 500 }).catch(
      (e: unknown) => e,
    );
    expect(isCertwrightError(error) && error.code).toBe('unavailable');
    expect((error as Error).message).not.toContain('hunter22');
    expect((error as Error).message).toContain('127.0.0.1:1');
  });
});
