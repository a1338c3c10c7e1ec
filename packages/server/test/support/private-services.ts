import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Private Redis and PostgreSQL instances for tests that stop and restart a dependency. The
 * machine's shared services are never restarted: other test runs use them.
 */

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for the child to bind). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, ms = 60_000) {
  for (let waited = 0; waited < ms; waited += 100) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export function redisServerSkipReason(): string | undefined {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'redis-server is not installed';
  }
}

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** The running redis-server's pid (benches read its CPU); undefined while stopped. */
  readonly pid: number | undefined;
  /** Kills the server (SIGKILL: nothing is saved; it runs without persistence anyway). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

/** `redis-server --save ''` on a random loopback port. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    log = '';
    const c = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    c.stdout?.on('data', (d) => {
      log += d;
    });
    c.stderr?.on('data', (d) => {
      log += d;
    });
    child = c;
    await waitUntil(() => {
      if (c.exitCode !== null) throw new Error(`redis-server exited:\n${log}`);
      return /Ready to accept connections/.test(log);
    }, 'redis-server');
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    async stop() {
      if (!child) return;
      const c = child;
      child = undefined;
      c.kill('SIGKILL');
      await exited(c);
    },
    start,
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

export function privatePostgresSkipReason(): string | undefined {
  return existsSync(join(PG_BIN, 'initdb')) ? undefined : `${PG_BIN}/initdb not found`;
}

export interface PrivatePostgres {
  readonly port: number;
  /** The `postgres` database of the private cluster, user postgres, trust auth on loopback. */
  readonly url: string;
  /** Fast shutdown (clients are disconnected). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes the cluster's directory. */
  destroy(): Promise<void>;
}

/** PostgreSQL refuses to run as root: a root test process runs it as the `postgres` user. */
function postgresUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/** A throwaway PostgreSQL cluster (`initdb` in a temp directory, socket in that directory). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  const user = postgresUser();
  execFileSync(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'],
    { stdio: 'ignore', ...user },
  );
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    log = '';
    const args = [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ];
    const c = spawn(join(PG_BIN, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...user });
    c.stdout?.on('data', (d) => {
      log += d;
    });
    c.stderr?.on('data', (d) => {
      log += d;
    });
    child = c;
    await waitUntil(() => {
      if (c.exitCode !== null) throw new Error(`postgres exited:\n${log}`);
      return /ready to accept connections/.test(log);
    }, 'private postgres');
  };
  const stop = async () => {
    if (!child) return;
    const c = child;
    child = undefined;
    // SIGINT is PostgreSQL's fast shutdown: clients are disconnected, nothing is lost.
    c.kill('SIGINT');
    await exited(c);
  };
  await start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
